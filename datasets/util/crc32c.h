// CRC-32C (Castagnoli polynomial, reflected 0x82F63B78), as TFRecord files use it, and the
// TFRecord "masked" form of a CRC (so that a CRC stored next to the data it covers does not
// checksum to a fixed point). Table-driven, one byte at a time. Users: the TensorBoard event
// files (experiments/lib/tensorboard.cc) and the checksum of checkpoints
// (encoders/checkpoint_file.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace placerl {

// CRC-32C of `n` bytes; `crc` continues a previous value (0 to start).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

// TFRecord's mask: rotate right by 15 bits and add a constant.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace placerl
