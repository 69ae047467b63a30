#include "encoders/checkpoint_file.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "datasets/util/crc32c.h"
#include "datasets/util/errors.h"

namespace placerl::encoders {

namespace {

constexpr const char kMagic[] = "placerl-checkpoint ";
constexpr size_t kMaxHeader = 128;

// "<name>: <reason>", or the reason alone for an unnamed checkpoint (the caller names it).
std::string Named(const std::string& name, const std::string& reason) { return name.empty() ? reason : name + ": " + reason; }

std::string Hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

}  // namespace

bool HasCheckpointHeader(const std::string& file_bytes) { return file_bytes.rfind(kMagic, 0) == 0; }

std::string FrameCheckpoint(const std::string& archive) {
  const uint32_t crc = Crc32c(archive.data(), archive.size());
  return std::string(kMagic) + "crc32c=" + Hex(crc) + " bytes=" + std::to_string(archive.size()) + "\n" + archive;
}

std::string CheckpointArchive(const std::string& file_bytes, const std::string& name) {
  if (file_bytes.empty()) throw ConfigError(Named(name, "empty file, not a placerl checkpoint"));
  if (!HasCheckpointHeader(file_bytes)) {
    if (file_bytes.rfind("PK", 0) == 0) return file_bytes;  // written before checksums (a zip archive)
    // A header cut inside its magic is still a header.
    if (std::string(kMagic).rfind(file_bytes.substr(0, sizeof kMagic - 1), 0) == 0)
      throw ConfigError(Named(name, "truncated checkpoint (" + std::to_string(file_bytes.size()) + " bytes, inside its header)"));
    throw ConfigError(Named(name, "not a placerl checkpoint (it starts with neither the checkpoint header nor a zip archive)"));
  }
  const size_t eol = file_bytes.find('\n');
  if (eol == std::string::npos || eol > kMaxHeader) {
    if (eol == std::string::npos && file_bytes.size() <= kMaxHeader)
      throw ConfigError(Named(name, "truncated checkpoint (" + std::to_string(file_bytes.size()) + " bytes, inside its header)"));
    throw ConfigError(Named(name, "damaged checkpoint header"));
  }
  const std::string header = file_bytes.substr(0, eol);
  unsigned crc = 0;
  unsigned long long bytes = 0;
  char tail = 0;
  if (std::sscanf(header.c_str(), "placerl-checkpoint crc32c=%8x bytes=%llu%c", &crc, &bytes, &tail) != 2 ||
      header != std::string(kMagic) + "crc32c=" + Hex(crc) + " bytes=" + std::to_string(bytes))
    throw ConfigError(Named(name, "damaged checkpoint header '" + header + "'"));
  const size_t have = file_bytes.size() - eol - 1;
  if (have < bytes)
    throw ConfigError(Named(name, "truncated checkpoint (" + std::to_string(have) + " of its " + std::to_string(bytes) +
                                      " bytes present)"));
  if (have > bytes)
    throw ConfigError(Named(name, "damaged checkpoint (" + std::to_string(have - bytes) + " bytes after its " +
                                      std::to_string(bytes) + ")"));
  const uint32_t actual = Crc32c(file_bytes.data() + eol + 1, have);
  if (actual != crc)
    throw ConfigError(Named(name, "damaged checkpoint (checksum mismatch: crc32c " + Hex(actual) + ", the header says " +
                                      Hex(crc) + ")"));
  return file_bytes.substr(eol + 1);
}

std::string UnreadableArchiveReason(const std::string& archive, const std::string& name, const std::string& detail) {
  // A zip archive ends with its end-of-central-directory record (signature PK\5\6, 22 bytes plus
  // a comment of at most 64 KiB): without one the file was cut.
  const size_t from = archive.size() > 22 + 65535 ? archive.size() - 22 - 65535 : 0;
  if (archive.find(std::string("PK\x05\x06", 4), from) == std::string::npos)
    return Named(name, "truncated checkpoint (its zip archive has no end record; " + std::to_string(archive.size()) +
                           " bytes present)");
  std::string first = detail.substr(0, detail.find('\n'));
  if (first.size() > 160) first = first.substr(0, 160) + "...";
  return Named(name, "not a placerl checkpoint, or a damaged one (" + first + ")");
}

}  // namespace placerl::encoders
