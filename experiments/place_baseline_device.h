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

namespace placerl::device_baseline {

// What a placer sees. `seed` differs per draw for stochastic methods. `env` is a one-shot
// device environment on the same graph and machine (its memory mask on when --memory-aware),
// for placers that decide group by group through its mask; others ignore it. `config` carries
// the method options; a placer may append what the reader should know to `notes` (result.json).
// A placer that cannot place within memory throws InfeasibleAction (exit 2 with its reason).
struct PlacerInput {
  const graphs::ComputeGraph& graph;
  const perf::Machine& machine;
  uint64_t seed;
  env::DeviceEnv* env;
  const config::DevicePlaceBaselineConfig& config;
  std::vector<std::string>* notes;
};

struct Placer {
  std::string name;
  std::string description;
  bool stochastic = false;  // drawn repeatedly within the budget, best kept
  // op → device; must keep every co-location group on one device.
  std::function<std::vector<int>(const PlacerInput&)> place;
};

// The method table (single, round_robin, random, …).
const std::vector<Placer>& Placers();

// The run directory's picture of a placement (also place-train/place --env device): per-device
// timeline (one bar per op, coloured by kind) above per-device memory over time; `r` is the
// result of sim's last run of `placement`. .png or .svg by the path's extension.
void WriteTimelinePicture(const std::string& path, const std::string& title, const graphs::ComputeGraph& g,
                          const perf::Machine& m, const std::vector<int>& placement, const perf::Simulator& sim,
                          const perf::SimResult& r);
// "1.23 ms"-style label of a duration in seconds.
std::string StepTimeLabel(double seconds);

// The fusion cap of fuse_max_group_fraction (place-baseline fuse=true, place-train/place --env
// device): fraction × the smallest accelerator's memory (every device's when the machine has no
// accelerator), in bytes; 0 (no cap) when fraction is 0 or that memory is unlimited. Throws
// ConfigError unless fraction is in [0, 1].
double FuseMaxGroupBytes(const perf::Machine& m, double fraction);
void CheckFuseMaxGroupFraction(double fraction);  // the same ConfigError

// True when argv selects `--env device` (or `--env=device`): main dispatches on it before parsing.
bool SelectsDeviceEnv(int argc, char** argv);
// The whole `place-baseline --env device` program (parsing included); returns the exit code.
int PlaceBaselineDeviceMain(int argc, char** argv);

}  // namespace placerl::device_baseline
