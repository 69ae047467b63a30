// Data-parallel training of a placed compute graph: step = makespan + ring all-reduce of the
// gradients on the busiest device + the slowest update, by hand.
#include "cost_models/tpu/graph_training.h"

#include <gtest/gtest.h>

#include "cost_models/tpu/catalog.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/graphs/training_graph.h"
#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

TEST(GraphTraining, StepByHand) {
  // a (10 µs, 4 MB params) → b (20 µs, 2 MB params), both on device 0 of a replica with 2 devices.
  std::vector<graphs::OpInfo> ops(2);
  ops[0].name = "a";
  ops[0].time_s = 10e-6;
  ops[0].param_bytes = 4e6;
  ops[0].output_bytes = 1e3;
  ops[1].name = "b";
  ops[1].time_s = 20e-6;
  ops[1].param_bytes = 2e6;
  ops[1].inputs = {0};
  const graphs::ComputeGraph g = graphs::BuildComputeGraph(ops);
  const SimConfig cfg = BaechiConfig({PlainDevice(1e12, 1e11), PlainDevice(1e12, 1e11)});
  Simulator sim(g, cfg);
  GraphTrainingConfig c;
  c.replicas = 4;
  c.ring_bw = 10e9;
  c.ring_hop_latency = 1e-6;
  c.optimizer_traffic = 7;
  const GraphTrainingResult r = EvaluateGraphTraining(&sim, g, {0, 0}, cfg, c);
  EXPECT_NEAR(r.compute_s, 30e-6, 1e-15);
  // Unidirectional ring of 4: AR = 2·(3·α + 3/4·S/B), S = 6 MB.
  EXPECT_NEAR(r.allreduce_s, 2 * (3 * 1e-6 + 0.75 * 6e6 / 10e9), 1e-15);
  EXPECT_NEAR(r.optimizer_s, 6e6 * 7 / 1e11, 1e-15);
  EXPECT_NEAR(r.step_s, r.compute_s + r.allreduce_s + r.optimizer_s, 1e-15);
  EXPECT_DOUBLE_EQ(r.grad_bytes[0], 6e6);
  EXPECT_DOUBLE_EQ(r.grad_bytes[1], 0);
  // Spreading the parameters over both devices halves the largest all-reduce (minus latency).
  const GraphTrainingResult spread = EvaluateGraphTraining(&sim, g, {0, 1}, cfg, c);
  EXPECT_NEAR(spread.allreduce_s, 2 * (3 * 1e-6 + 0.75 * 4e6 / 10e9), 1e-15);
  // One replica: no all-reduce.
  c.replicas = 1;
  EXPECT_DOUBLE_EQ(EvaluateGraphTraining(&sim, g, {0, 0}, cfg, c).allreduce_s, 0);
  c.replicas = 0;
  EXPECT_THROW(EvaluateGraphTraining(&sim, g, {0, 0}, cfg, c), ConfigError);
}

// A toy chip: 1 TFLOP/s, 100 GB/s HBM, one ring axis of 10 GB/s links with 1 µs hops, every
// efficiency 1, no latency floor or launch overhead, so the numbers can be done by hand.
Catalog ToyCatalog() {
  return ParseCatalog(R"(
efficiency { matmul: 1 memory: 1 collective_bw: 1 latency_floor_s: 0 launch_overhead_s: 0
             tp_overlap: 1 hbm_usable: 1 }
chip { name: "toy" peak { dtype: BF16 flops_per_s: 1e12 } hbm_bytes: 1e9 hbm_bw: 1e11
       devices_per_chip: 1
       ici { topology: RING links_per_chip: 2 link_bw_one_way: 1e10 hop_latency_s: 1e-6
             wrap_min_axis: 0 max_chips_per_domain: 64 } })",
                      "toy.pbtxt");
}

TEST(GraphTraining, GraphsWithUpdateOpsAreNotUpdatedTwice) {
  // a (4 MB params) → b (2 MB params) + grad/ and update/ ops (AddTrainingOps): the update runs
  // inside the simulated step, and the update ops' Adam state (2 × 6 MB) is no gradient.
  std::vector<graphs::OpInfo> ops(2);
  ops[0].name = "a";
  ops[0].time_s = 10e-6;
  ops[0].param_bytes = 4e6;
  ops[0].output_bytes = 1e3;
  ops[1].name = "b";
  ops[1].time_s = 20e-6;
  ops[1].param_bytes = 2e6;
  ops[1].inputs = {0};
  const graphs::ComputeGraph g = graphs::BuildComputeGraph(graphs::AddTrainingOps(ops));
  ASSERT_EQ(g.num_ops(), 6);
  const SimConfig cfg = BaechiConfig({PlainDevice(1e12, 1e11)});
  Simulator sim(g, cfg);
  GraphTrainingConfig c;
  c.replicas = 2;
  const GraphTrainingResult r = EvaluateGraphTraining(&sim, g, std::vector<int>(6, 0), cfg, c);
  EXPECT_DOUBLE_EQ(r.optimizer_s, 0);
  EXPECT_DOUBLE_EQ(r.grad_bytes[0], 6e6);
  EXPECT_NEAR(r.step_s, r.compute_s + r.allreduce_s, 1e-15);
}

TEST(GraphOnMesh, DataParallelStepByHand) {
  // "a" (10 µs, 1e6 FLOPs, 4 MB fp32 weights = 1e6 elements) → "grad/a" (20 µs, 2e6 FLOPs).
  std::vector<graphs::OpInfo> ops(2);
  ops[0].name = "a";
  ops[0].time_s = 10e-6;
  ops[0].flops = 1e6;
  ops[0].param_bytes = 4e6;
  ops[0].output_bytes = 1e3;
  ops[1].name = "grad/a";
  ops[1].time_s = 20e-6;
  ops[1].flops = 2e6;
  ops[1].inputs = {0};
  const graphs::ComputeGraph g = graphs::BuildComputeGraph(ops);
  Mesh mesh;
  mesh.set_chip("toy");
  mesh.add_dims(4);
  GraphRunPlan plan;
  plan.examples_per_replica = 8;
  const GraphRunResult r = EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan);
  EXPECT_EQ(r.replicas, 4);
  EXPECT_NEAR(r.compute_s, 30e-6, 1e-15);
  // Ring of 4 without wraparound: AR = 2·(3·1e-6 + 3/4 · 4e6 / 1e10) = 606 µs, after backward.
  const double ar = 2 * (3e-6 + 0.75 * 4e6 / 1e10);
  EXPECT_NEAR(r.dp_comm_s, ar, 1e-12);
  EXPECT_NEAR(r.exposed_dp_s, ar, 1e-12);
  // Adam on 1e6 fp32 weights: (2·4 + 4 + 16) B each through 1e11 B/s = 280 µs.
  EXPECT_NEAR(r.optimizer_s, 28e6 / 1e11, 1e-12);
  EXPECT_NEAR(r.step_s, 30e-6 + ar + 280e-6, 1e-12);
  EXPECT_NEAR(r.examples_per_s, 32 / r.step_s, 1e-6);
  EXPECT_NEAR(r.mfu, 4 * 3e6 / (r.step_s * 4 * 1e12), 1e-15);
  // Overlapped with the backward ops ("grad/" names): 20 µs of it hides.
  plan.grad_reduce_after_backward = false;
  EXPECT_NEAR(EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan).exposed_dp_s, ar - 20e-6, 1e-12);
  // Weight-update sharding: RS(grads) + AG(weights) = the same bytes as the AR, 1/4 of the update.
  plan.grad_reduce_after_backward = true;
  plan.shard_optimizer = true;
  const GraphRunResult w = EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan);
  EXPECT_NEAR(w.dp_comm_s, ar, 1e-12);
  EXPECT_NEAR(w.optimizer_s, 28e6 / 1e11 / 4, 1e-12);
  // HBM: the simulation's peak + grads (4 MB) + Adam state, 8 B per element (/4 when sharded).
  EXPECT_NEAR(r.hbm_per_device - w.hbm_per_device, 8e6 * 3 / 4, 1);
  // The breakdown adds up: 4 MB weights, 4 MB fp32 gradients, Adam 8 B × 1e6.
  EXPECT_NEAR(r.hbm_params, 4e6, 1e-6);
  EXPECT_NEAR(r.hbm_grads, 4e6, 1e-6);
  EXPECT_NEAR(r.hbm_optimizer, 8e6, 1e-6);
  EXPECT_NEAR(r.hbm_params + r.hbm_grads + r.hbm_optimizer + r.hbm_activations, r.hbm_per_device, 1e-6);
  // Errors: replicas must tile the mesh; placements must match the graph.
  plan.devices_per_replica = 3;
  EXPECT_THROW(EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan), ConfigError);
  plan.devices_per_replica = 2;
  plan.placement = {0};
  EXPECT_THROW(EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan), ConfigError);
  plan.placement = {0, 2};
  EXPECT_THROW(EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan), ConfigError);
}

TEST(GraphOnMesh, PipelineByHand) {
  // Chain a → b → c → d (10 µs each, 1e4-byte outputs), backward grad/d → … → grad/a (20 µs
  // each); 2 stages on toy:2, 4 microbatches. Equal op times → cut {a, b | c, d}, grads with
  // their forward op. Stage time 2·(10 + 20) = 60 µs; each stage sends one 1e4-byte tensor
  // per microbatch (b → c, grad/c → grad/b): 1 µs hop + 1e4/1e10 = 2 µs. t_mb = 62 µs;
  // step = (4 + 2 − 1) · 62 µs; bubble = 62 µs.
  std::vector<graphs::OpInfo> ops;
  const char* f[4] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    graphs::OpInfo o;
    o.name = f[i];
    o.time_s = 10e-6;
    o.output_bytes = 1e4;
    if (i > 0) o.inputs = {i - 1};
    ops.push_back(o);
  }
  for (int i = 3; i >= 0; --i) {
    graphs::OpInfo o;
    o.name = std::string("grad/") + f[i];
    o.time_s = 20e-6;
    o.output_bytes = 1e4;
    o.inputs = {i};
    if (i < 3) o.inputs.push_back(static_cast<int>(ops.size()) - 1);
    ops.push_back(o);
  }
  const graphs::ComputeGraph g = graphs::BuildComputeGraph(ops);
  Mesh mesh;
  mesh.set_chip("toy");
  mesh.add_dims(2);
  GraphRunPlan plan;
  plan.pipeline = 2;
  plan.microbatches = 4;
  plan.examples_per_replica = 1;
  const GraphRunResult r = EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan);
  EXPECT_EQ(r.replicas, 1);
  ASSERT_EQ(r.stage_of_op.size(), 8u);
  EXPECT_EQ(r.stage_of_op, (std::vector<int>{0, 0, 1, 1, 1, 1, 0, 0}));  // a b c d gd gc gb ga
  EXPECT_NEAR(r.bubble_s, 62e-6, 1e-12);
  EXPECT_NEAR(r.compute_s + r.pipeline_comm_s, 4 * 62e-6, 1e-12);
  EXPECT_NEAR(r.step_s, 5 * 62e-6, 1e-12);
  EXPECT_NEAR(r.examples_per_s, 4 / r.step_s, 1e-6);
  // One stage with 4 microbatches = gradient accumulation: 4 × 120 µs, no bubble.
  plan.pipeline = 1;
  const GraphRunResult acc = EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan);
  EXPECT_NEAR(acc.step_s, 4 * 120e-6, 1e-12);
  EXPECT_EQ(acc.bubble_s, 0);
  plan.pipeline = 9;  // more stages than ops
  EXPECT_THROW(EvaluateGraphOnMesh(g, mesh, ToyCatalog(), plan), ConfigError);
}

TEST(GraphOnMesh, ResNetFusionAndPerChipThroughput) {
  // Same ResNet-50 step unfused vs XLA-fused: same FLOPs, fewer bytes → faster; per-chip
  // throughput of a compute-bound data-parallel run barely depends on the replica count.
  const graphs::NamedGraph plain = graphs::GraphFromSpec("resnet(depth=50,batch=32)");
  const graphs::NamedGraph fused = graphs::GraphFromSpec("resnet(depth=50,batch=32,fused=1)");
  EXPECT_EQ(plain.examples, 32);
  double f1 = 0, f2 = 0;
  for (double f : plain.graph.flops) f1 += f;
  for (double f : fused.graph.flops) f2 += f;
  EXPECT_DOUBLE_EQ(f1, f2);
  Mesh small;
  small.set_chip("tpu_v3");
  small.add_dims(2);
  small.add_dims(2);
  Mesh big = small;
  big.set_dims(0, 16);
  big.set_dims(1, 16);
  GraphRunPlan p;
  p.examples_per_replica = 32;
  const Catalog& c = DefaultCatalog();
  const GraphRunResult a = EvaluateGraphOnMesh(plain.graph, small, c, p);
  const GraphRunResult b = EvaluateGraphOnMesh(fused.graph, small, c, p);
  EXPECT_LT(b.compute_s, a.compute_s);
  EXPECT_EQ(b.replicas, 8);  // 4 chips × 2 cores
  const GraphRunResult big_run = EvaluateGraphOnMesh(fused.graph, big, c, p);
  EXPECT_EQ(big_run.replicas, 512);
  EXPECT_NEAR(big_run.examples_per_s / big_run.chips, b.examples_per_s / b.chips,
              0.02 * b.examples_per_s / b.chips);
  EXPECT_GT(big_run.dp_comm_s, 0);
}

}  // namespace
}  // namespace placerl::perf
