// The file format of placerl checkpoints (agents::Learner's, encoders::Policy's weights-only
// reader, the HDP grouper's): one header line with the length and CRC-32C of what follows, then
// LibTorch's archive (a zip file):
//   placerl-checkpoint crc32c=<8 hex digits> bytes=<decimal length>\n<archive>
// so that a truncated, extended or damaged file (a flipped byte anywhere) is refused at load with
// the file named and the reason, instead of loading silently or failing later. Files written
// before the header existed (e.g. experiments/pretrained/chip) start with the zip signature and
// are read as they are; for those, a file LibTorch cannot read is told apart as truncated when its
// zip end record is missing. Torch-free.
#pragma once

#include <string>

namespace placerl::encoders {

// The header line followed by `archive`.
std::string FrameCheckpoint(const std::string& archive);

// The archive inside a checkpoint file's bytes (`name` names the file in errors; "": the caller
// names it). Throws
// ConfigError "<name>: <reason>" — empty file; truncated (with the lengths); trailing bytes;
// checksum mismatch (damaged); a damaged header; neither the header nor a zip archive ("not a
// placerl checkpoint"). A file without the header is returned unchanged (not checked).
std::string CheckpointArchive(const std::string& file_bytes, const std::string& name);

// Why LibTorch could not read an unchecked archive (one without the header): "truncated (no zip
// end record)" or "not a placerl checkpoint (…)" with `detail` (LibTorch's first line), prefixed
// "<name>: ".
std::string UnreadableArchiveReason(const std::string& archive, const std::string& name, const std::string& detail);

// True when `file_bytes` starts with the header (the file carries a checksum).
bool HasCheckpointHeader(const std::string& file_bytes);

}  // namespace placerl::encoders
