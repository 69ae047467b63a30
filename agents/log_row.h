// One metrics row of a training loop: (tag, value) pairs in the order they are logged, as the run
// directory's logs take them (experiments/lib/tensorboard.h run::Scalars is the same type).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace placerl {

using LogRow = std::vector<std::pair<std::string, double>>;

}  // namespace placerl
