// Classic device placers on a computation graph and a machine (place-baseline --env device's
// methods): single device, round-robin, blocks, random, the papers' expert placement, and
// search/device's HEFT, m-TOPO, m-ETF, m-SCT, METIS, Scotch behind one table; their options come
// from the run config (DevicePlaceBaselineConfig).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cost_models/tpu/machine.h"
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

// place-baseline --env device's defaults (every key of DevicePlaceBaselineConfig it reads; its
// --help-config), also the options of the start placers below.
config::DevicePlaceBaselineConfig DefaultDevicePlaceBaselineConfig();

// (The fusion cap: env::FuseMaxGroupBytes, env/device/device_env.h.)

// Registers the search placers (heft, m_topo, m_etf, m_sct, metis, scotch), expert and heft_ls
// (HEFT + local search for start_minutes of CPU time) as device(mode=iterative,start=NAME) start
// placements (env/device/device_env.h), with place-baseline --env device's default options:
// accelerators only, CPU-only groups then moved to the CPU, no fusion (the environment's graph is
// already the one it places). Idempotent.
void RegisterDeviceStartPlacers();

}  // namespace placerl::device_baseline
