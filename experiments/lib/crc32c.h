// CRC-32C for the run-directory files (TensorBoard event records): the implementation is
// datasets/util/crc32c.h (checkpoints below experiments/ use it too); these names keep the
// experiments' spelling.
#pragma once

#include "datasets/util/crc32c.h"

namespace placerl::run {

using placerl::Crc32c;
using placerl::MaskCrc32c;
using placerl::UnmaskCrc32c;

}  // namespace placerl::run
