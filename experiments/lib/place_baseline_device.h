// place-baseline --env device: classic device placers (single device, round-robin, blocks,
// random, the papers' expert placement, and search/device's HEFT, m-TOPO, m-ETF, m-SCT, METIS,
// Scotch — one line each in the method table of place_baseline_device.cc; their options come
// from the config, `--set key=value`) on a computation graph and a machine, scored by the placed-graph
// simulator, writing the run directory of docs/conventions.md: config.pbtxt, metrics.csv,
// TensorBoard events, result.json, best.placement (the `<op> <device>` text that
// `perf-model simulate --placement` reads) and best.png|svg (per-device timeline + memory).
//   place-baseline --env device --graph 'resnet(depth=50)' --machine 'k80(gpus=4)' --method round_robin --out DIR
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cost_models/tpu/machine.h"
#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/compute_graph.h"
#include "datasets/proto/device_placement.pb.h"
#include "env/device/device_env.h"
#include "search/device/placers.h"

namespace placerl::device_baseline {

// The run directory's picture of a placement (also place-train/place --env device): per-device
// timeline (one bar per op, coloured by kind) above per-device memory over time; `r` is the
// result of sim's last run of `placement`. .png or .svg by the path's extension.
void WriteTimelinePicture(const std::string& path, const std::string& title, const graphs::ComputeGraph& g,
                          const perf::Machine& m, const std::vector<int>& placement, const perf::Simulator& sim,
                          const perf::SimResult& r);
// "1.23 ms"-style label of a duration in seconds.
std::string StepTimeLabel(double seconds);

// True when argv selects `--env device` (or `--env=device`): main dispatches on it before parsing.
bool SelectsDeviceEnv(int argc, char** argv);
// The whole `place-baseline --env device` program (parsing included); returns the exit code.
int PlaceBaselineDeviceMain(int argc, char** argv);

}  // namespace placerl::device_baseline
