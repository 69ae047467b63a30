// The two `--env device` programs that place_train_main.cc and place_main.cc dispatch to (the
// device training loop itself: agents/device_training.h; HDP's: agents/hdp_training.h):
//   place-train --env device --graph 'rnnlm' --machine 'k80(gpus=2,memory_fraction=0.39)' --minutes 10 --out DIR
//   place --env device --checkpoint DIR --graph 'enas_cell(seed=9)' --machine … --samples 16 --out DIR2
// Run directory (docs/device_placement.md): config.pbtxt, metrics.csv, TensorBoard events,
// checkpoints/latest.ckpt, best.placement (+ best.png timeline/memory) per graph, curve, result.json.
// `--method hdp`: HDP's grouper and placer (agents/hdp_training.h TrainHdp).
// Torch-free header.
#pragma once

#include <string>
#include <vector>

namespace placerl {

// Splits "a(x=1,y=2),b" at top-level commas: {"a(x=1,y=2)", "b"}.
std::vector<std::string> SplitGraphSpecs(const std::string& text);

// True when argv selects `--env device` (place-baseline's rule): the two mains dispatch on it.
bool DeviceEnvSelected(int argc, char** argv);

// The whole `place-train --env device` / `place --env device` programs (parsing included);
// return the exit code.
int DevicePlaceTrainMain(int argc, char** argv);
int DevicePlaceMain(int argc, char** argv);

}  // namespace placerl
