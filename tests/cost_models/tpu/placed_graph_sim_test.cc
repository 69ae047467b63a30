// Placed-graph simulator against schedules computed by hand (each stated in a comment).
// Unless noted: plain devices at 1e9 FLOP/s (an op of F FLOPs takes F/1e9 s; bytes = 0 so
// the memory term never binds), links of bandwidth 1e9 B/s.
#include "cost_models/tpu/placed_graph_sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

using graphs::BuildComputeGraph;
using graphs::ComputeGraph;
using graphs::OpInfo;

constexpr double kMs = 1e-3;
constexpr double kTol = 1e-12;

OpInfo Op(const std::string& name, double ms, double out, std::vector<int> inputs = {}) {
  OpInfo o;
  o.name = name;
  o.kind = "matmul";
  o.flops = ms * 1e6;  // at 1e9 FLOP/s → `ms` milliseconds
  o.output_bytes = out;
  o.inputs = std::move(inputs);
  return o;
}

SimConfig Config(int devices, Contention mode, double latency = 0, double bw = 1e9) {
  SimConfig c;
  c.devices.assign(devices, PlainDevice(1e9, 1e12));
  c.link.latency_s = latency;
  c.link.bandwidth = bw;
  c.link.contention = mode;
  return c;
}

// a (1 ms) → b (2 ms) → c (3 ms), outputs 1e6 B each.
ComputeGraph Chain3() {
  return BuildComputeGraph({Op("a", 1, 1e6), Op("b", 2, 1e6, {0}), Op("c", 3, 1e6, {1})});
}

TEST(PlacedGraphSim, ChainOnOneDeviceIsSumOfOpTimes) {
  // 1 + 2 + 3 = 6 ms, no transfers, utilisation 1.
  const SimResult r = SimulatePlacement(Chain3(), {0, 0, 0}, Config(2, Contention::kSharedChannel));
  EXPECT_NEAR(r.makespan, 6 * kMs, kTol);
  EXPECT_EQ(r.num_transfers, 0);
  EXPECT_NEAR(r.busy[0], 6 * kMs, kTol);
  EXPECT_NEAR(r.utilisation[0], 1.0, 1e-12);
  EXPECT_EQ(r.busy[1], 0);
}

TEST(PlacedGraphSim, ChainSplitAddsOneTransfer) {
  // c on device 1: transfer of b's output = 0.1 ms latency + 1e6 B / 1e9 B/s = 1.1 ms.
  // a 0–1, b 1–3, transfer 3–4.1, c 4.1–7.1 → 7.1 ms (both contention modes).
  for (Contention mode : {Contention::kSharedChannel, Contention::kSenderBus}) {
    const SimResult r = SimulatePlacement(Chain3(), {0, 0, 1}, Config(2, mode, 1e-4));
    EXPECT_NEAR(r.makespan, 7.1 * kMs, kTol);
    EXPECT_EQ(r.num_transfers, 1);
    EXPECT_DOUBLE_EQ(r.bytes_transferred, 1e6);
    EXPECT_NEAR(r.op_start[2], 4.1 * kMs, kTol);
  }
}

TEST(PlacedGraphSim, DiamondBranchesRunInParallel) {
  // a → {b, c} → d, 1 ms each, outputs 1e6 B over 1e10 B/s = 0.1 ms per transfer.
  // One device: 4 ms. Placement a0 b0 c1 d0: a 0–1; b 1–2 on dev 0; a→c 1–1.1, c 1.1–2.1 on
  // dev 1; c→d 2.1–2.2; d 2.2–3.2 → 3.2 ms; dev 1 busy 1 ms of 3.2.
  const ComputeGraph g =
      BuildComputeGraph({Op("a", 1, 1e6), Op("b", 1, 1e6, {0}), Op("c", 1, 1e6, {0}),
                         Op("d", 1, 1e6, {1, 2})});
  const SimConfig cfg = Config(2, Contention::kSharedChannel, 0, 1e10);
  EXPECT_NEAR(SimulatePlacement(g, {0, 0, 0, 0}, cfg).makespan, 4 * kMs, kTol);
  const SimResult r = SimulatePlacement(g, {0, 0, 1, 0}, cfg);
  EXPECT_NEAR(r.makespan, 3.2 * kMs, kTol);
  EXPECT_NEAR(r.op_start[2], 1.1 * kMs, kTol);
  EXPECT_NEAR(r.op_start[3], 2.2 * kMs, kTol);
  EXPECT_EQ(r.num_transfers, 2);
  EXPECT_NEAR(r.utilisation[1], 1.0 / 3.2, 1e-12);
}

TEST(PlacedGraphSim, TwoTransfersOnOneSenderSerialise) {
  // x (0–1 ms) and y (1–2 ms) on dev 0; cx on dev 1, cy on dev 2 (1 ms each); outputs
  // 1.5e6 B → 1.5 ms per transfer. Sender bus: x→ 1–2.5; y waits for the bus: 2.5–4.0;
  // cx 2.5–3.5, cy 4.0–5.0 → 5.0 ms. Shared channel: same (the sender's channel is busy).
  // Sender bus with a 0.5 ms hold: y's transfer starts at 2.5 + 0.5 = 3.0 → 4.5; cy 4.5–5.5.
  const ComputeGraph g =
      BuildComputeGraph({Op("x", 1, 1.5e6), Op("y", 1, 1.5e6, {0}), Op("cx", 1, 0, {0}),
                         Op("cy", 1, 0, {1})});
  const std::vector<int> p = {0, 0, 1, 2};
  for (Contention mode : {Contention::kSenderBus, Contention::kSharedChannel}) {
    const SimResult r = SimulatePlacement(g, p, Config(3, mode));
    EXPECT_NEAR(r.op_start[3], 4.0 * kMs, kTol);
    EXPECT_NEAR(r.makespan, 5.0 * kMs, kTol);
  }
  SimConfig hold = Config(3, Contention::kSenderBus);
  hold.link.bus_hold_s = 0.5 * kMs;
  EXPECT_NEAR(SimulatePlacement(g, p, hold).makespan, 5.5 * kMs, kTol);
}

TEST(PlacedGraphSim, ReceiverContentionOnlyInSharedChannel) {
  // a on dev 0 and b on dev 1 both end at 1 ms and send 1.5e6 B (1.5 ms) to dev 2, where
  // ca and cb (1 ms each) consume them.
  // Sender bus (no receiver contention): both arrive at 2.5; ca 2.5–3.5, cb 3.5–4.5 → 4.5.
  // Shared channel (Baechi): a's receive 1–2.5 holds dev 2's channel; b's receive starts at
  // max(1, 2.5) = 2.5 → arrives 4.0; ca 2.5–3.5, cb 4.0–5.0 → 5.0.
  const ComputeGraph g = BuildComputeGraph(
      {Op("a", 1, 1.5e6), Op("b", 1, 1.5e6), Op("ca", 1, 0, {0}), Op("cb", 1, 0, {1})});
  const std::vector<int> p = {0, 1, 2, 2};
  EXPECT_NEAR(SimulatePlacement(g, p, Config(3, Contention::kSenderBus)).makespan, 4.5 * kMs, kTol);
  const SimResult r = SimulatePlacement(g, p, Config(3, Contention::kSharedChannel));
  EXPECT_NEAR(r.op_start[3], 4.0 * kMs, kTol);
  EXPECT_NEAR(r.makespan, 5.0 * kMs, kTol);
}

TEST(PlacedGraphSim, TensorSentToADeviceOnce) {
  // a (dev 0, 1 ms, 1e6 B out) feeds b and c on dev 1 (1 ms each): one transfer 1–2, then
  // b 2–3, c 3–4 → 4 ms.
  const ComputeGraph g =
      BuildComputeGraph({Op("a", 1, 1e6), Op("b", 1, 0, {0}), Op("c", 1, 0, {0})});
  for (Contention mode : {Contention::kSharedChannel, Contention::kSenderBus}) {
    const SimResult r = SimulatePlacement(g, {0, 1, 1}, Config(2, mode));
    EXPECT_EQ(r.num_transfers, 1);
    EXPECT_DOUBLE_EQ(r.bytes_transferred, 1e6);
    EXPECT_NEAR(r.makespan, 4 * kMs, kTol);
  }
  // Consumers on two different remote devices: Baechi sends one copy per destination
  // (send 1–2 to dev 1, then 2–3 to dev 2: c 3–4); Placeto's one bus transfer feeds both
  // (b, c both 2–3).
  const SimResult baechi = SimulatePlacement(g, {0, 1, 2}, Config(3, Contention::kSharedChannel));
  EXPECT_EQ(baechi.num_transfers, 2);
  EXPECT_NEAR(baechi.makespan, 4 * kMs, kTol);
  const SimResult placeto = SimulatePlacement(g, {0, 1, 2}, Config(3, Contention::kSenderBus));
  EXPECT_EQ(placeto.num_transfers, 1);
  EXPECT_NEAR(placeto.makespan, 3 * kMs, kTol);
}

TEST(PlacedGraphSim, ReadyListOrderBooksChannelsInReadyOrder) {
  // a (dev 0, 10 ms, ready 0) and p (dev 1, 1 ms) → b (dev 1, 1 ms, ready 1) each send
  // 1.5e6 B (1.5 ms) to dev 2 (ca, cb 1 ms each). Event-driven: b ends first (2) and books
  // dev 2's channel 2–3.5; a's receive 10–11.5; cb 3.5–4.5, ca 11.5–12.5 → 12.5 ms.
  // Baechi's list order: a (ready 0, index 0) is processed first and books dev 2's channel
  // 10–11.5; b (ready 1) then receives at max(2, 11.5) = 11.5 → 13; cb 13–14 → 14 ms.
  const ComputeGraph g =
      BuildComputeGraph({Op("a", 10, 1.5e6), Op("p", 1, 0), Op("b", 1, 1.5e6, {1}),
                         Op("ca", 1, 0, {0}), Op("cb", 1, 0, {2})});
  const std::vector<int> pl = {0, 1, 1, 2, 2};
  SimConfig cfg = Config(3, Contention::kSharedChannel);
  SimResult r = SimulatePlacement(g, pl, cfg);
  EXPECT_NEAR(r.op_start[4], 3.5 * kMs, kTol);
  EXPECT_NEAR(r.makespan, 12.5 * kMs, kTol);
  cfg.ready_list_order = true;
  r = SimulatePlacement(g, pl, cfg);
  EXPECT_NEAR(r.op_start[3], 11.5 * kMs, kTol);
  EXPECT_NEAR(r.op_start[4], 13 * kMs, kTol);
  EXPECT_NEAR(r.makespan, 14 * kMs, kTol);
  EXPECT_NEAR(r.busy_until, 14 * kMs, kTol);
}

TEST(PlacedGraphSim, BusyUntilCountsTrailingGapAndBusHold) {
  // Placeto's reported run time: x (dev 0, 1 ms) sends 1e6 B (1 ms) to y (dev 1, 0.2 ms) and
  // the bus is held 2 ms after: transfer 1–2, y 2–2.2 (+0.5 gap → 2.7), bus free at 4.
  const ComputeGraph g = BuildComputeGraph({Op("x", 1, 1e6), Op("y", 0.2, 0, {0})});
  SimConfig cfg = Config(2, Contention::kSenderBus);
  cfg.op_gap_s = 0.5 * kMs;
  cfg.link.bus_hold_s = 2 * kMs;
  const SimResult r = SimulatePlacement(g, {0, 1}, cfg);
  EXPECT_NEAR(r.makespan, 2.2 * kMs, kTol);
  EXPECT_NEAR(r.busy_until, 4 * kMs, kTol);
  cfg.link.bus_hold_s = 0;  // then the trailing gap of y: 2.7
  EXPECT_NEAR(SimulatePlacement(g, {0, 1}, cfg).busy_until, 2.7 * kMs, kTol);
}

TEST(PlacedGraphSim, PerOpGap) {
  // Chain on one device with a 0.5 ms gap after each op: 1 + .5 + 2 + .5 + 3 = 7 ms
  // (no gap after the last op counts toward the makespan).
  SimConfig cfg = Config(1, Contention::kSenderBus);
  cfg.op_gap_s = 0.5 * kMs;
  EXPECT_NEAR(SimulatePlacement(Chain3(), {0, 0, 0}, cfg).makespan, 7 * kMs, kTol);
  // Zero-time ops get no gap: z (0 s) → a (1 ms) → 1 ms.
  OpInfo z = Op("z", 0, 0);
  const ComputeGraph g = BuildComputeGraph({z, Op("a", 1, 0, {0})});
  EXPECT_NEAR(SimulatePlacement(g, {0, 0}, cfg).makespan, 1 * kMs, kTol);
}

ComputeGraph MemoryChain() {
  // params 10/20/30, outputs 100/200/300, temps 1000/2000/3000; times 1/2/3 ms.
  std::vector<OpInfo> ops = {Op("a", 1, 100), Op("b", 2, 200, {0}), Op("c", 3, 300, {1})};
  for (int i = 0; i < 3; ++i) {
    ops[i].param_bytes = 10.0 * (i + 1);
    ops[i].temp_bytes = 1000.0 * (i + 1);
  }
  return BuildComputeGraph(ops);
}

TEST(PlacedGraphSim, MemoryPeakByHand) {
  // One device, base = params 60. a [0,1): out_a (100, until b ends at 3) + temp 1000 →
  // 1160. [1,3): out_a + out_b 200 (until c ends at 6) + temp_b 2000 → 2360. [3,6): out_a
  // freed at 3 before c allocates; out_b + out_c 300 + temp_c 3000 → 3560. Peak 3560.
  const SimResult r = SimulatePlacement(MemoryChain(), {0, 0, 0}, Config(1, Contention::kSenderBus));
  EXPECT_DOUBLE_EQ(r.peak_memory[0], 3560);
  EXPECT_FALSE(r.oom);
  // Split a, b on dev 0 and c on dev 1 (transfer 200 B at 1e9 B/s + 0.1 ms = 0.1002 ms,
  // 3–3.1002). Dev 0: base 30; [1,3) out_a + out_b + temp_b = 2300 → peak 2330 (out_b now
  // lives until its send ends at 3.1002). Dev 1: base 30; received copy of out_b 200 from
  // receive start 3 to c's end; c: out_c 300 + temp 3000 → 30 + 200 + 3300 = 3530.
  const SimResult s =
      SimulatePlacement(MemoryChain(), {0, 0, 1}, Config(2, Contention::kSharedChannel, 1e-4));
  EXPECT_DOUBLE_EQ(s.peak_memory[0], 2330);
  EXPECT_DOUBLE_EQ(s.peak_memory[1], 3530);
  // Zero-time op z (output 100) read by a (1 ms, temp 50): out_z lives [0, 1) with temp_a
  // → 150. A zero-time sink's output has a zero-length lifetime and never counts.
  OpInfo a = Op("a", 1, 0, {0});
  a.temp_bytes = 50;
  const ComputeGraph zg = BuildComputeGraph({Op("z", 0, 100), a, Op("sink", 0, 1e9)});
  EXPECT_DOUBLE_EQ(
      SimulatePlacement(zg, {0, 0, 0}, Config(1, Contention::kSenderBus)).peak_memory[0], 150);
}

TEST(PlacedGraphSim, OutOfMemoryNamesTheDevice) {
  SimConfig cfg = Config(1, Contention::kSenderBus);
  cfg.devices[0].memory_capacity = 3559;  // one byte under the 3560 peak above
  SimResult r = SimulatePlacement(MemoryChain(), {0, 0, 0}, cfg);
  EXPECT_TRUE(r.oom);
  EXPECT_EQ(r.oom_device, 0);
  cfg.devices[0].memory_capacity = 3560;
  EXPECT_FALSE(SimulatePlacement(MemoryChain(), {0, 0, 0}, cfg).oom);
  // Split: dev 0 peaks at 2330, dev 1 at 3530; capacity 3000 each → only dev 1 is over.
  SimConfig two = Config(2, Contention::kSharedChannel, 1e-4);
  two.devices[0].memory_capacity = two.devices[1].memory_capacity = 3000;
  r = SimulatePlacement(MemoryChain(), {0, 0, 1}, two);
  EXPECT_TRUE(r.oom);
  EXPECT_EQ(r.oom_device, 1);
}

TEST(PlacedGraphSim, InvalidPlacementOrConfigThrows) {
  const SimConfig cfg = Config(2, Contention::kSharedChannel);
  EXPECT_THROW(SimulatePlacement(Chain3(), {0, 0, 2}, cfg), ConfigError);
  EXPECT_THROW(SimulatePlacement(Chain3(), {0, -1, 0}, cfg), ConfigError);
  EXPECT_THROW(SimulatePlacement(Chain3(), {0, 0}, cfg), ConfigError);
  EXPECT_THROW(SimulatePlacement(Chain3(), {0, 0, 0}, Config(0, Contention::kSenderBus)),
               ConfigError);
  SimConfig bad = cfg;
  bad.link.bandwidth = 0;
  EXPECT_THROW(SimulatePlacement(Chain3(), {0, 0, 0}, bad), ConfigError);
}

TEST(PlacedGraphSim, RooflineAndGivenTimes) {
  // A device with roofline rates: op time = OpTime(rates, kind, flops, bytes); a given
  // time (time=) overrides it.
  SimDevice dev;
  dev.rates.peak_flops = 1e12;
  dev.rates.hbm_bw = 1e11;
  dev.rates.eff_matmul = 0.5;
  dev.rates.launch = 1e-6;
  OpInfo mm = Op("mm", 0, 0);
  mm.flops = 1e9;
  mm.bytes = 1e6;
  OpInfo ew = mm;
  ew.name = "ew";
  ew.kind = "elementwise";
  ew.inputs = {0};
  OpInfo given = mm;
  given.name = "given";
  given.time_s = 0.25;
  given.inputs = {1};
  const ComputeGraph g = BuildComputeGraph({mm, ew, given});
  SimConfig cfg = Config(1, Contention::kSenderBus);
  cfg.devices = {dev};
  Simulator sim(g, cfg);
  // matmul: max(1e9 / (1e12·0.5), 1e6 / 1e11) + 1e-6 = 2e-3 + 1e-6.
  EXPECT_NEAR(sim.OpTimeOn(0, 0), 2.001e-3, kTol);
  // elementwise: 1e9 / (1e12 / 16) = 16e-3, + 1e-6.
  EXPECT_NEAR(sim.OpTimeOn(1, 0), OpTime(dev.rates, OpKind::kElementwise, 1e9, 1e6), kTol);
  EXPECT_NEAR(sim.OpTimeOn(1, 0), 16.001e-3, kTol);
  EXPECT_DOUBLE_EQ(sim.OpTimeOn(2, 0), 0.25);
  EXPECT_NEAR(sim.Run({0, 0, 0}).makespan, 2.001e-3 + 16.001e-3 + 0.25, kTol);
}

TEST(PlacedGraphSim, PresetsMoveFourMegabytes) {
  // Notes §2.4: a 4 MB transfer takes 4e6 / 7.6e9 = 526.3 µs under Placeto and
  // 134 µs + 4e6 / 5.7e9 = 835.754 µs under Baechi. Two zero-time ops a → b on devices 0, 1
  // (no gap after zero-time ops): makespan = the transfer time.
  OpInfo a = Op("a", 0, 4e6), b = Op("b", 0, 0, {0});
  a.time_s = b.time_s = 0;
  const ComputeGraph g = BuildComputeGraph({a, b});
  const std::vector<SimDevice> devs(2, PlainDevice(1e12, 1e11));
  const SimConfig placeto = PlacetoConfig(devs);
  EXPECT_DOUBLE_EQ(placeto.op_gap_s, 5.7e-6);
  EXPECT_DOUBLE_EQ(placeto.link.bus_hold_s, 25e-6);
  EXPECT_EQ(placeto.link.contention, Contention::kSenderBus);
  EXPECT_NEAR(SimulatePlacement(g, {0, 1}, placeto).makespan, 4e6 / 7.6e9, kTol);
  const SimConfig baechi = BaechiConfig(devs);
  EXPECT_EQ(baechi.link.contention, Contention::kSharedChannel);
  EXPECT_TRUE(baechi.ready_list_order);
  EXPECT_FALSE(placeto.ready_list_order);
  EXPECT_NEAR(SimulatePlacement(g, {0, 1}, baechi).makespan, 134e-6 + 4e6 / 5.7e9, kTol);
}

TEST(PlacedGraphSim, TiesGoToTheLowerOpIndex) {
  // Three independent 1 ms ops on one device, all ready at 0 → run in index order.
  const ComputeGraph g = BuildComputeGraph({Op("p", 1, 0), Op("q", 1, 0), Op("r", 1, 0)});
  const SimResult r = SimulatePlacement(g, {0, 0, 0}, Config(1, Contention::kSenderBus));
  EXPECT_NEAR(r.op_start[0], 0, kTol);
  EXPECT_NEAR(r.op_start[1], 1 * kMs, kTol);
  EXPECT_NEAR(r.op_start[2], 2 * kMs, kTol);
}

TEST(PlacedGraphSim, RandomDagRespectsDependenciesAndIsReusable) {
  const ComputeGraph g = graphs::MakeLayeredRandomGraph(2000, 40, 3, 5);
  std::vector<int> p(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) p[i] = (i * 7) % 4;
  for (const SimConfig& base : {PlacetoConfig({}), BaechiConfig({})}) {
    SimConfig cfg = base;
    cfg.devices.assign(4, PlainDevice(1e12, 1e11));
    Simulator sim(g, cfg);
    const SimResult first = sim.Run(p);
    const SimResult& again = sim.Run(p);
    EXPECT_EQ(first.makespan, again.makespan);  // buffers reset between runs
    EXPECT_EQ(first.peak_memory, again.peak_memory);
    for (int c = 0; c < g.num_ops(); ++c) {
      EXPECT_NEAR(first.op_end[c] - first.op_start[c], sim.OpTimeOn(c, p[c]), 1e-15);
      for (int e = g.in_offsets[c]; e < g.in_offsets[c + 1]; ++e) {
        const int q = g.in_sources[e];
        double need = first.op_end[q];
        if (p[q] != p[c]) need += cfg.link.latency_s + g.output_bytes[q] / cfg.link.bandwidth;
        EXPECT_GE(first.op_start[c], need - 1e-12);
      }
    }
    // One op at a time per device, with the gap after each op of non-zero time.
    std::vector<std::vector<int>> on(4);
    for (int c = 0; c < g.num_ops(); ++c) on[p[c]].push_back(c);
    for (auto& ops : on) {
      std::sort(ops.begin(), ops.end(),
                [&](int x, int y) { return first.op_start[x] < first.op_start[y]; });
      for (size_t k = 1; k < ops.size(); ++k)
        EXPECT_GE(first.op_start[ops[k]], first.op_end[ops[k - 1]] + cfg.op_gap_s - 1e-12);
    }
    double total_busy = 0;
    for (int d = 0; d < 4; ++d) {
      EXPECT_LE(first.busy[d], first.makespan + 1e-12);
      total_busy += first.busy[d];
    }
    EXPECT_GT(total_busy, first.makespan);  // some parallelism
    EXPECT_GT(first.num_transfers, 0);
  }
}


// The OOM report: what is live on a device at its peak adds up to the peak, on random DAGs
// with params, temps, outputs and received copies, for both presets.
TEST(PlacedGraphSim, LiveTensorsAtThePeakSumToThePeak) {
  graphs::ComputeGraph g = graphs::MakeLayeredRandomGraph(400, 20, 3, 7);
  for (int i = 0; i < g.num_ops(); ++i) {
    g.param_bytes[i] = (i % 5 == 0) ? 1e6 * (1 + i % 7) : 0;
    g.temp_bytes[i] = (i % 3 == 0) ? 2e5 * (1 + i % 4) : 0;
  }
  std::vector<int> p(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) p[i] = (i * 7 + i / 13) % 3;
  for (int preset = 0; preset < 2; ++preset) {
    std::vector<SimDevice> devs(3, PlainDevice(1e12, 1e11));
    const SimConfig cfg = preset ? PlacetoConfig(devs) : BaechiConfig(devs);
    Simulator sim(g, cfg);
    const SimResult& r = sim.Run(p);
    for (int d = 0; d < 3; ++d) {
      const auto live = sim.LiveAt(d, r.peak_time[d]);
      double sum = 0;
      bool any_copy = false;
      for (const auto& t : live) {
        sum += t.bytes;
        any_copy |= std::string(t.what) == "received copy";
      }
      EXPECT_NEAR(sum, r.peak_memory[d], 1e-9 * r.peak_memory[d]) << "preset " << preset << " device " << d;
      EXPECT_TRUE(any_copy) << "preset " << preset << " device " << d;
      for (size_t k = 1; k < live.size(); ++k) EXPECT_GE(live[k - 1].bytes, live[k].bytes);
    }
  }
}

}  // namespace
}  // namespace placerl::perf
