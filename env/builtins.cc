// The built-in environments, registered explicitly (see registry.h).
#include "env/block/block_env.h"
#include "env/chip/chip_env.h"
#include "env/device/device_env.h"
#include "env/registry.h"
#include "env/toy/partition_env.h"

namespace placerl::env {

void RegisterBuiltinEnvironments(EnvRegistry* r) {
  r->Register({"chip",
               "Circuit Training macro placement: hard macros one per step onto grid cells, exact proxy cost",
               "chip(netlist=../shared/datasets/chip/circuit_training/macro_tiles_10x10/netlist.pb.txt,soft=keep)",
               ChipEnv::Make});
  r->Register({"partition",
               "tiny graph partitioning onto devices (kDevice), optimum known by enumeration",
               "partition(nodes=8,devices=2)", PartitionEnv::Make});
  r->Register({"device",
               "device placement: co-location groups of a training graph onto a machine's devices (kDevice), "
               "simulated step time; one-shot (ColocRL/HDP/GDP) or iterative (Placeto) episodes",
               "device(graph=tests/data/device/mlp_training.graph,machine='k80(gpus=2)')", DeviceEnv::Make});
  r->Register({"block",
               "architecture search: one decision of a search space per step (kChoice), quality minus a step-time penalty "
               "(Brainformer blocks: the TPU performance model's step time, step_time=perf)",
               "block(space=nb201)", BlockEnv::Make});
}

}  // namespace placerl::env
