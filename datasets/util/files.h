// Reading whole input files and writing output files safely (docs/conventions.md):
//   - inputs: only regular files (a directory, /dev/zero, a FIFO are refused before reading),
//     plain or gzip (detected by magic bytes), at most kMaxInputBytes raw and decompressed
//     unless a reader asks for another limit;
//   - outputs: written to a temporary file next to the target and renamed over it, so a crash
//     or a full disk never leaves a half-written output; a target that exists but is not a
//     regular file (device, symlink, directory, FIFO) is refused, never replaced; temporary
//     files are removed when the process is interrupted (SIGINT, SIGTERM, SIGHUP) and the
//     signal is then re-raised; several files are written all or nothing; parent directories
//     are created when asked, and removed again when the write fails.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace placerl {

// Largest input read by default, raw and after gunzip (the largest shipped netlist is 11 MB
// decompressed).
inline constexpr size_t kMaxInputBytes = size_t(1) << 30;  // 1 GiB

// Whole content of `path`; gunzips transparently when the file starts with the gzip magic.
// Throws IoError when it is not a regular file or cannot be read, and ParseError
// (`path:0: ...`) when it, or its decompressed content, is larger than `max_bytes`, or the
// gzip stream is corrupt or truncated.
std::string ReadFile(const std::string& path, size_t max_bytes = kMaxInputBytes);

// Throws IoError unless `path` names an existing regular file (symlinks followed).
void CheckRegularInputFile(const std::string& path);

// A line-based input cut in its last row (a copy or download stopped early) can read as a
// shorter legal row with other numbers (`19882 240.781 10` from `19882 240.781 1006.2`).
// The last line of `text` when `text` does not end with a newline and that line holds more
// than blanks: its 1-based number (0 when the text ends with a newline or a blank line) and,
// in `*last`, the line itself.
int UnterminatedLastLine(std::string_view text, std::string_view* last = nullptr);

// Throws ParseError(`file`, line, "no newline at end of file: the last line ('…') may be
// truncated; …") when `text` ends in a line without a newline, unless `complete(line)` says
// such a line cannot have been cut (a reader's rule: a .plc row with all five fields, a
// protobuf text file ending with '}', …), or it holds control bytes (binary data, which the
// reader reports as such).
void RefuseTruncatedLastLine(std::string_view text, const std::string& file,
                             const std::function<bool(std::string_view)>& complete = nullptr);

struct WriteOptions {
  bool create_parent_dirs = false;  // mkdir -p the target's folder (removed again on failure)
};

struct FileToWrite {
  std::string path;
  std::string content;
};

// The checks a write of `path` makes before writing, for binaries to call before they start
// long work: the target, if it exists, is a regular file; its folder exists (or may be
// created). Throws IoError.
void CheckOutputPath(const std::string& path, const WriteOptions& options = {});

// Writes `content` to `path` through `path.tmp.<pid>` + rename. Throws IoError (with the
// errno text) when the target is not a regular file or the write fails; nothing is left
// behind then.
void WriteFileAtomic(const std::string& path, const std::string& content, const WriteOptions& options = {});

// Writes several files all or nothing: every temporary file is written first, then all are
// renamed. When anything fails, the temporaries, the files this call created and the
// folders it created are removed (a target that existed before and was already replaced
// cannot be brought back; renames within a folder practically do not fail).
void WriteFilesAtomic(const std::vector<FileToWrite>& files, const WriteOptions& options = {});

// A temporary file for a writer that produces the file itself (cairo writes PNG to a path):
// checks the target, creates parent folders if asked, and registers the temporary path for
// removal on SIGINT/SIGTERM/SIGHUP. Commit() renames it over the target; destroying it
// uncommitted removes the temporary and the folders it created.
class PendingOutput {
 public:
  // `suffix` is appended to the temporary name (".png": some writers look at the extension).
  PendingOutput(const std::string& target, const std::string& suffix = "", const WriteOptions& options = {});
  ~PendingOutput();
  PendingOutput(const PendingOutput&) = delete;
  PendingOutput& operator=(const PendingOutput&) = delete;

  const std::string& temp_path() const { return temp_; }
  const std::string& target() const { return target_; }
  bool target_existed() const { return target_existed_; }
  // Writes `content` to the temporary file (errno text in the IoError).
  void Write(const std::string& content);
  void Commit();
  // Removes the temporary (unless committed) and the folders this output created that are
  // empty (idempotent).
  void Abort();

 private:
  std::string target_, temp_;
  std::vector<std::string> created_dirs_;  // outermost first
  bool target_existed_ = false;
  bool committed_ = false;
  int slot_ = -1;  // in the signal-time cleanup registry; -2 once aborted
};

// "a,b,c" → {"a","b","c"} (empty pieces dropped).
std::vector<std::string> SplitCommaList(const std::string& list);

}  // namespace placerl
