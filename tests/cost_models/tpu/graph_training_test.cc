// Data-parallel training of a placed compute graph: step = makespan + ring all-reduce of the
// gradients on the busiest device + the slowest update, by hand.
#include "cost_models/tpu/graph_training.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace placerl::perf
