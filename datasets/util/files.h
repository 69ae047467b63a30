// Reading whole files (plain or gzip, detected by magic bytes) and writing files
// atomically (write to a temporary file next to the target, then rename), so that a
// crash or a full disk never leaves a half-written output behind.
#pragma once

#include <string>
#include <vector>

namespace placerl {

// Whole content of `path`; gunzips transparently when the file starts with the gzip
// magic. Throws IoError when it cannot be read and ParseError when the gzip stream is
// corrupt or truncated. `max_bytes` bounds the decompressed size (a zip bomb is an error).
std::string ReadFile(const std::string& path, size_t max_bytes = size_t(1) << 33);

// Writes `content` to `path` through `path.tmp.<pid>` + rename. Throws IoError.
void WriteFileAtomic(const std::string& path, const std::string& content);

// "a,b,c" → {"a","b","c"} (empty pieces dropped).
std::vector<std::string> SplitCommaList(const std::string& list);

}  // namespace placerl
