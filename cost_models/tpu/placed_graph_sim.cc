#include "cost_models/tpu/placed_graph_sim.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <cmath>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

template <class E>
bool EventAfter(const E& a, const E& b) {
  return a.t > b.t || (a.t == b.t && a.tag > b.tag);
}

// Sort key of a memory event: the time's IEEE bits (times are ≥ 0, so the bits order like
// the times and the sign bit is free) shifted left, low bit 1 for an allocation — so at
// equal times frees sort first.
uint64_t MemKey(double t, bool alloc) {
  uint64_t k;
  std::memcpy(&k, &t, sizeof k);
  if (!(t > 0)) k = 0;  // (-0.0 → 0)
  return (k << 1) | (alloc ? 1 : 0);
}

}  // namespace

// Stable LSD radix sort on the 64-bit key, 11 bits per pass; passes where every key has the
// same digit are skipped.
void Simulator::RadixSortByKey(std::vector<MemEvent>* v, std::vector<MemEvent>* tmp) {
  constexpr int kBits = 11, kBuckets = 1 << kBits;
  const size_t n = v->size();
  if (n < 2) return;
  tmp->resize(n);
  size_t count[kBuckets];
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count, count + kBuckets, 0);
    for (const MemEvent& e : *v) ++count[(e.key >> shift) & (kBuckets - 1)];
    if (count[((*v)[0].key >> shift) & (kBuckets - 1)] == n) continue;
    size_t sum = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const size_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (const MemEvent& e : *v) (*tmp)[count[(e.key >> shift) & (kBuckets - 1)]++] = e;
    v->swap(*tmp);
  }
}

SimDevice PlainDevice(double flops_per_s, double bytes_per_s, double capacity) {
  SimDevice d;
  d.rates.peak_flops = flops_per_s;
  d.rates.hbm_bw = bytes_per_s;
  d.use_kind_efficiency = false;
  d.memory_capacity = capacity;
  return d;
}

SimConfig PlacetoConfig(std::vector<SimDevice> devices) {
  SimConfig c;
  c.devices = std::move(devices);
  c.link.latency_s = 0;
  c.link.bandwidth = 7.6e9;
  c.link.contention = Contention::kSenderBus;
  c.link.bus_hold_s = 25e-6;
  c.op_gap_s = 5.7e-6;
  return c;
}

SimConfig BaechiConfig(std::vector<SimDevice> devices) {
  SimConfig c;
  c.devices = std::move(devices);
  c.link.latency_s = 134e-6;
  c.link.bandwidth = 5.7e9;
  c.link.contention = Contention::kSharedChannel;
  c.link.bus_hold_s = 0;
  c.op_gap_s = 0;
  c.ready_list_order = true;  // Baechi's VirtualScheduler order (tests/data/sim_golden)
  return c;
}

Simulator::Simulator(const graphs::ComputeGraph& graph, const SimConfig& config)
    : g_(graph), cfg_(config), nd_(static_cast<int>(config.devices.size())) {
  if (nd_ == 0) throw ConfigError("simulator: no devices");
  for (int d = 0; d < nd_; ++d) {
    const DeviceRates& r = cfg_.devices[d].rates;
    if (!(r.peak_flops > 0) || !(r.hbm_bw > 0) || !(r.eff_matmul > 0) || !(r.eff_memory > 0) ||
        !(r.launch >= 0) || !(cfg_.devices[d].memory_capacity >= 0))
      throw ConfigError("simulator: device " + std::to_string(d) +
                        " needs peak_flops, hbm_bw, efficiencies > 0, launch, capacity >= 0");
  }
  const LinkModel& l = cfg_.link;
  if (!(l.bandwidth > 0) || !(l.latency_s >= 0) || !(l.bus_hold_s >= 0) ||
      !std::isfinite(l.latency_s) || !std::isfinite(l.bus_hold_s))
    throw ConfigError("simulator: link needs bandwidth > 0 and finite latency, bus hold >= 0");
  if (!(cfg_.op_gap_s >= 0) || !std::isfinite(cfg_.op_gap_s))
    throw ConfigError("simulator: op gap must be finite and >= 0");
  const int n = g_.num_ops();
  if (n >= (1 << 30) || nd_ >= (1 << 30)) throw ConfigError("simulator: graph too large");
  op_time_.resize(static_cast<size_t>(n) * nd_);
  for (int i = 0; i < n; ++i) {
    OpKind kind = OpKind::kElementwise;  // unknown kinds run on the vector unit
    ParseOpKind(g_.kinds[i].c_str(), &kind);
    for (int d = 0; d < nd_; ++d) {
      const SimDevice& dev = cfg_.devices[d];
      double t;
      if (g_.time_s[i] >= 0) {
        t = g_.time_s[i];
      } else if (dev.use_kind_efficiency) {
        t = OpTime(dev.rates, kind, g_.flops[i], g_.bytes[i]);
      } else {
        t = std::max(g_.flops[i] / dev.rates.peak_flops, g_.bytes[i] / dev.rates.hbm_bw) +
            dev.rates.launch;
      }
      op_time_[static_cast<size_t>(i) * nd_ + d] = t;
    }
  }
  queues_.resize(nd_);
  mem_rest_.resize(nd_);
  mem_chrono_.resize(nd_);
  pending_.resize(n);
  ready_.resize(n);
  out_free_.resize(n);
  copy_begin_.resize(n);
  copy_count_.resize(n);
  chan_free_.resize(nd_);
  dev_free_.resize(nd_);
  running_.resize(nd_);
  dispatch_at_.resize(nd_);
  events_.reserve(4 * static_cast<size_t>(n) + 16);
  copies_.reserve(n);
  res_.busy.resize(nd_);
  res_.utilisation.resize(nd_);
  res_.peak_memory.resize(nd_);
  res_.peak_time.resize(nd_);
  res_.op_start.resize(n);
  res_.op_end.resize(n);
  // Incremental re-simulation's records.
  fpos_.resize(n);
  own_free_.resize(n);
  stamp_.assign(n, 0);
  finish_order_.reserve(n);
  arrival_in_.resize(g_.in_sources.size());
  out_to_in_.assign(g_.out_targets.size(), -1);
  {  // the k-th edge p → c in p's consumers is the k-th edge from p in c's producers
    std::vector<char> used(g_.in_sources.size(), 0);
    for (int p = 0; p < n; ++p)
      for (int e = g_.out_offsets[p]; e < g_.out_offsets[p + 1]; ++e) {
        const int c = g_.out_targets[e];
        for (int f = g_.in_offsets[c]; f < g_.in_offsets[c + 1]; ++f)
          if (g_.in_sources[f] == p && !used[f]) {
            used[f] = 1;
            out_to_in_[e] = f;
            break;
          }
        if (out_to_in_[e] < 0) incremental_ = incremental_ok_ = false;  // lists that disagree: always run in full
      }
  }
  snapshot_every_ = std::max(1, n / 32);
}

void Simulator::Push(double t, int kind, int id) {
  events_.push_back({t, (static_cast<uint32_t>(kind) << 30) | static_cast<uint32_t>(id)});
  std::push_heap(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return EventAfter(a, b);
  });
}

// Asks for a dispatch on idle device d at time `at` (at least its free time). Keeps the
// earliest pending dispatch per device; a later one is then unnecessary (that dispatch
// re-requests when the best queued op is not ready yet). Stale events are harmless.
void Simulator::RequestDispatch(int d, double at) {
  if (running_[d]) return;  // its finish requests the next dispatch
  at = std::max(at, dev_free_[d]);
  if (dispatch_at_[d] <= at) return;
  dispatch_at_[d] = at;
  Push(at, 2, d);
}

// Every op enters its device's queue (ordered by ready time, then index) as soon as its
// ready time is known — at the finish event of its last producer, never after the ready
// time — so a dispatch at time T sees every op ready by T, and the queue's minimum is the
// earliest-ready, lowest-index op.
void Simulator::Arrive(int c, double t, double now, const std::vector<int>& dev) {
  if (t > ready_[c]) ready_[c] = t;
  if (--pending_[c] != 0) return;
  if (cfg_.ready_list_order) {
    ready_list_.emplace_back(ready_[c], c);
    std::push_heap(ready_list_.begin(), ready_list_.end(),
                   std::greater<std::pair<double, int>>());
    return;
  }
  const int d = dev[c];
  auto& q = queues_[d];
  q.emplace_back(ready_[c], c);
  std::push_heap(q.begin(), q.end(), std::greater<std::pair<double, int>>());
  RequestDispatch(d, std::max(now, ready_[c]));
}

void Simulator::StartOp(int op, int d, double t) {
  const double dt = OpTimeOn(op, d);
  running_[d] = 1;
  res_.busy[d] += dt;
  res_.op_start[op] = t;
  res_.op_end[op] = t + dt;
  if (dt > 0) {  // chronological per device: output + temp at start, temp freed at end
    const double a = g_.output_bytes[op] + g_.temp_bytes[op];
    if (a > 0) mem_chrono_[d].push_back({MemKey(t, true), a});
    if (g_.temp_bytes[op] > 0) mem_chrono_[d].push_back({MemKey(t + dt, false), -g_.temp_bytes[op]});
  }
}

// Event-driven schedule: op finishes and device dispatches in time order (finishes first
// at equal times, then by op / device id).
// `finished` > 0: resumes from a restored snapshot (the queues and events are as they were).
void Simulator::RunEvents(const std::vector<int>& dev, int finished) {
  const int start_finished = finished;
  if (finished == 0)
    for (int d = 0; d < nd_; ++d) {
      std::make_heap(queues_[d].begin(), queues_[d].end(), std::greater<std::pair<double, int>>());
      if (!queues_[d].empty()) RequestDispatch(d, 0);
    }
  auto after = [](const Event& a, const Event& b) {
    return EventAfter(a, b);
  };
  auto qafter = [](const std::pair<double, int>& a, const std::pair<double, int>& b) {
    return a > b;
  };
  while (!events_.empty()) {
    std::pop_heap(events_.begin(), events_.end(), after);
    const Event ev = events_.back();
    const int ev_kind = static_cast<int>(ev.tag >> 30);
    const int ev_id = static_cast<int>(ev.tag & ((1u << 30) - 1));
    events_.pop_back();
    if (ev_kind == 0) {
      ++finished;
      res_.makespan = std::max(res_.makespan, ev.t);
      FinishOp(ev_id, ev.t, dev);
      if (incremental_ && finished % snapshot_every_ == 0 && finished < g_.num_ops()) TakeSnapshot(finished);
    } else {
      const int d = ev_id;
      if (dispatch_at_[d] == ev.t) dispatch_at_[d] = kNever;  // consumed
      auto& q = queues_[d];
      if (running_[d] || q.empty()) continue;
      const double at = std::max(dev_free_[d], q.front().first);
      if (at > ev.t) {  // device in its gap or best queued op not ready yet
        RequestDispatch(d, at);
        continue;
      }
      std::pop_heap(q.begin(), q.end(), qafter);
      const int op = q.back().second;
      q.pop_back();
      StartOp(op, d, ev.t);
      Push(res_.op_end[op], 0, op);
    }
  }
  if (finished != g_.num_ops()) throw Error("simulator: internal error, not every op ran");
  last_simulated_ = finished - start_finished;
}

// Baechi's virtual scheduler: take the (ready time, index)-smallest ready op, run it at
// max(device free, ready) and finish it at once (its transfers book channels now; its
// consumers may join the list). Later ops start at ≥ their device's free time, so per
// device the starts are chronological (mem_chrono_ stays sorted).
void Simulator::RunReadyList(const std::vector<int>& dev) {
  auto& h = ready_list_;
  std::make_heap(h.begin(), h.end(), std::greater<std::pair<double, int>>());
  int done = 0;
  while (!h.empty()) {
    std::pop_heap(h.begin(), h.end(), std::greater<std::pair<double, int>>());
    const auto [ready, op] = h.back();
    h.pop_back();
    const int d = dev[op];
    StartOp(op, d, std::max(dev_free_[d], ready));
    const double end = res_.op_end[op];
    res_.makespan = std::max(res_.makespan, end);
    ++done;
    FinishOp(op, end, dev);
  }
  if (done != g_.num_ops()) throw Error("simulator: internal error, not every op ran");
}

void Simulator::FinishOp(int o, double t, const std::vector<int>& dev) {
  const int d = dev[o];
  fpos_[o] = static_cast<int>(finish_order_.size());
  finish_order_.push_back(o);
  running_[d] = 0;
  const double gap = OpTimeOn(o, d) > 0 ? cfg_.op_gap_s : 0;
  dev_free_[d] = t + gap;
  res_.busy_until = std::max(res_.busy_until, t + gap);
  // Inputs of o on d are consumed: extend their lifetimes to t.
  for (int e = g_.in_offsets[o]; e < g_.in_offsets[o + 1]; ++e) {
    const int p = g_.in_sources[e];
    if (dev[p] == d) {
      out_free_[p] = std::max(out_free_[p], t);
    } else {
      for (int k = copy_begin_[p]; k < copy_begin_[p] + copy_count_[p]; ++k)
        if (copies_[k].device == d) copies_[k].free = std::max(copies_[k].free, t);
    }
  }
  out_free_[o] = std::max(out_free_[o], t);
  // Outputs.
  const double b = g_.output_bytes[o];
  const double cost = cfg_.link.latency_s + b / cfg_.link.bandwidth;
  copy_begin_[o] = static_cast<int>(copies_.size());
  copy_count_[o] = 0;
  const bool bus = cfg_.link.contention == Contention::kSenderBus;
  double bus_start = 0, bus_arrive = 0;
  bool bus_used = false;
  for (int e = g_.out_offsets[o]; e < g_.out_offsets[o + 1]; ++e) {
    const int c = g_.out_targets[e];
    const int dc = dev[c];
    if (dc == d) {
      arrival_in_[out_to_in_[e]] = t;
      Arrive(c, t, t, dev);
      continue;
    }
    int k = copy_begin_[o];
    const int kend = copy_begin_[o] + copy_count_[o];
    while (k < kend && copies_[k].device != dc) ++k;
    if (k == kend) {  // first consumer of this tensor on dc
      double start, arrive;
      if (bus) {
        if (!bus_used) {  // one transfer feeds all remote consumers
          bus_used = true;
          bus_start = std::max(t, chan_free_[d]);
          bus_arrive = bus_start + cost;
          chan_free_[d] = bus_arrive + cfg_.link.bus_hold_s;
          res_.busy_until = std::max(res_.busy_until, chan_free_[d]);
          out_free_[o] = std::max(out_free_[o], bus_arrive);
          ++res_.num_transfers;
          res_.bytes_transferred += b;
        }
        start = bus_start;
        arrive = bus_arrive;
      } else {
        const double send_start = std::max(t, chan_free_[d]);
        chan_free_[d] = send_start + cost;
        start = std::max(send_start, chan_free_[dc]);
        arrive = start + cost;
        chan_free_[dc] = arrive;
        res_.busy_until = std::max(res_.busy_until, arrive);
        out_free_[o] = std::max(out_free_[o], send_start + cost);
        ++res_.num_transfers;
        res_.bytes_transferred += b;
      }
      copies_.push_back({dc, start, arrive, arrive});
      ++copy_count_[o];
    }
    arrival_in_[out_to_in_[e]] = copies_[k].free;
    Arrive(c, copies_[k].free, t, dev);  // free == arrival time until a consumer ends
  }
  own_free_[o] = out_free_[o];
  if (!queues_[d].empty()) RequestDispatch(d, std::max(t, queues_[d].front().first));
}

void Simulator::TakeSnapshot(int finished) {
  if (num_snapshots_ == snapshots_.size()) snapshots_.emplace_back();
  Snapshot& s = snapshots_[num_snapshots_++];
  s.finished = finished;
  s.events = events_;  // assignments reuse the snapshot's buffers
  s.queues.resize(nd_);
  for (int d = 0; d < nd_; ++d) s.queues[d] = queues_[d];
  s.chan_free = chan_free_;
  s.dev_free = dev_free_;
  s.dispatch_at = dispatch_at_;
  s.busy = res_.busy;
  s.running = running_;
  s.mem_chrono_size.resize(nd_);
  for (int d = 0; d < nd_; ++d) s.mem_chrono_size[d] = mem_chrono_[d].size();
  s.copies = copies_.size();
  s.makespan = res_.makespan;
  s.busy_until = res_.busy_until;
  s.bytes_transferred = res_.bytes_transferred;
  s.num_transfers = res_.num_transfers;
}

int Simulator::ResumePoint(const std::vector<int>& dev) const {
  const int n = g_.num_ops();
  int first_read = n;  // earliest finish position that reads the device of a changed op
  for (int c = 0; c < n; ++c) {
    if (dev[c] == last_dev_[c]) continue;
    if (g_.in_offsets[c] == g_.in_offsets[c + 1]) return -1;  // a source: read at the start
    for (int e = g_.in_offsets[c]; e < g_.in_offsets[c + 1]; ++e)
      first_read = std::min(first_read, fpos_[g_.in_sources[e]]);
  }
  int k = -1;
  for (size_t i = 0; i < num_snapshots_ && snapshots_[i].finished <= first_read; ++i) k = static_cast<int>(i);
  return k;
}

// The state after the first s.finished finishes of the last run: the small state from the
// snapshot; per-op state rebuilt for the ops that finish later (set F) and their producers.
// An op's producers finish before it, so F holds every consumer of an op of F, and every
// changed op with its producers (ResumePoint). Values: pending = producers in F; ready = max of
// the arrivals of the producers not in F; out_free and the received copies' free of a producer
// not in F = its own finish's value, extended by its consumers not in F (on their devices).
void Simulator::Restore(size_t k, const std::vector<int>& dev) {
  (void)dev;  // ops outside F are placed as in the last run
  const Snapshot& s = snapshots_[k];
  const int nf = s.finished, n = g_.num_ops();
  if (++stamp_value_ == std::numeric_limits<int>::max()) {
    std::fill(stamp_.begin(), stamp_.end(), 0);
    stamp_value_ = 1;
  }
  for (int i = nf; i < n; ++i) {
    const int o = finish_order_[i];
    int pending = 0;
    double ready = 0;
    for (int e = g_.in_offsets[o]; e < g_.in_offsets[o + 1]; ++e) {
      const int p = g_.in_sources[e];
      if (fpos_[p] >= nf) {
        ++pending;
        continue;
      }
      if (arrival_in_[e] > ready) ready = arrival_in_[e];
      if (stamp_[p] == stamp_value_) continue;
      stamp_[p] = stamp_value_;
      double f = own_free_[p];
      const int kb = copy_begin_[p], ke = copy_begin_[p] + copy_count_[p];
      for (int q = kb; q < ke; ++q) copies_[q].free = copies_[q].arrive;
      const int dp = last_dev_[p];
      for (int x = g_.out_offsets[p]; x < g_.out_offsets[p + 1]; ++x) {
        const int c = g_.out_targets[x];
        if (fpos_[c] >= nf) continue;
        const double t = res_.op_end[c];
        const int dc = last_dev_[c];
        if (dc == dp) {
          f = std::max(f, t);
        } else {
          for (int q = kb; q < ke; ++q)
            if (copies_[q].device == dc) copies_[q].free = std::max(copies_[q].free, t);
        }
      }
      out_free_[p] = f;
    }
    pending_[o] = pending;
    ready_[o] = ready;
    out_free_[o] = 0;
  }
  events_ = s.events;
  for (int d = 0; d < nd_; ++d) {
    queues_[d] = s.queues[d];
    mem_chrono_[d].resize(s.mem_chrono_size[d]);
  }
  chan_free_ = s.chan_free;
  dev_free_ = s.dev_free;
  dispatch_at_ = s.dispatch_at;
  res_.busy = s.busy;
  running_ = s.running;
  copies_.resize(s.copies);
  res_.makespan = s.makespan;
  res_.busy_until = s.busy_until;
  res_.bytes_transferred = s.bytes_transferred;
  res_.num_transfers = s.num_transfers;
  finish_order_.resize(nf);
  num_snapshots_ = k + 1;
}

const SimResult& Simulator::Run(const std::vector<int>& dev) {
  const int n = g_.num_ops();
  if (static_cast<int>(dev.size()) != n)
    throw ConfigError("simulator: placement has " + std::to_string(dev.size()) +
                      " entries for " + std::to_string(n) + " ops");
  for (int i = 0; i < n; ++i)
    if (dev[i] < 0 || dev[i] >= nd_)
      throw ConfigError("simulator: op " + std::to_string(i) + " placed on device " +
                        std::to_string(dev[i]) + " of " + std::to_string(nd_));
  const bool event_mode = !cfg_.ready_list_order;
  const bool can_resume = incremental_ && event_mode && has_reference_;  // (has_reference_ implies incremental_)
  if (can_resume && dev == last_dev_) {  // the same placement: the same result
    last_simulated_ = 0;
    return res_;
  }
  const int resume = can_resume ? ResumePoint(dev) : -1;
  has_reference_ = false;  // until this run completes
  for (int d = 0; d < nd_; ++d) mem_rest_[d].clear();
  res_.oom = false;
  res_.oom_device = -1;
  if (resume >= 0) {
    Restore(static_cast<size_t>(resume), dev);
    last_dev_.assign(dev.begin(), dev.end());
    RunEvents(dev, snapshots_[resume].finished);
  } else {
    last_dev_.assign(dev.begin(), dev.end());
    events_.clear();
    ready_list_.clear();
    copies_.clear();
    finish_order_.clear();
    num_snapshots_ = 0;
    for (int d = 0; d < nd_; ++d) {
      queues_[d].clear();
      mem_chrono_[d].clear();
      chan_free_[d] = 0;
      dev_free_[d] = 0;
      running_[d] = 0;
      dispatch_at_[d] = kNever;
      res_.busy[d] = 0;
    }
    res_.makespan = 0;
    res_.busy_until = 0;
    res_.num_transfers = 0;
    res_.bytes_transferred = 0;
    for (int i = 0; i < n; ++i) {
      pending_[i] = g_.in_offsets[i + 1] - g_.in_offsets[i];
      ready_[i] = 0;
      out_free_[i] = 0;
      copy_begin_[i] = 0;
      copy_count_[i] = 0;
      if (pending_[i] == 0) {
        if (cfg_.ready_list_order) ready_list_.emplace_back(0.0, i);
        else queues_[dev[i]].emplace_back(0.0, i);
      }
    }
    if (cfg_.ready_list_order) {
      RunReadyList(dev);
      last_simulated_ = n;
    } else {
      RunEvents(dev, 0);
    }
  }
  has_reference_ = incremental_ && event_mode;

  // Memory: event sweep per device. Allocations at op start and temp frees at op end were
  // recorded in time order per device (mem_chrono_); the rest (output frees, received
  // copies, outputs of zero-time ops) are radix-sorted by MemKey here and merged in,
  // frees first at equal times.
  std::vector<double>& peak = res_.peak_memory;
  for (int d = 0; d < nd_; ++d) peak[d] = 0;
  auto alloc = [this](int d, double t, double b) { mem_rest_[d].push_back({MemKey(t, true), b}); };
  auto release = [this](int d, double t, double b) {
    mem_rest_[d].push_back({MemKey(t, false), -b});
  };
  for (int o = 0; o < n; ++o) {
    const int d = dev[o];
    peak[d] += g_.param_bytes[o];  // base (persistent)
    const double s = res_.op_start[o];
    const double b = g_.output_bytes[o];
    if (b > 0) {
      if (out_free_[o] > s) {
        if (res_.op_end[o] == s) alloc(d, s, b);  // zero-time op: not in mem_chrono_
        release(d, out_free_[o], b);
      }  // (out_free ≥ end, so an op of non-zero time always reaches here)
      for (int k = copy_begin_[o]; k < copy_begin_[o] + copy_count_[o]; ++k)
        if (copies_[k].free > copies_[k].start) {
          alloc(copies_[k].device, copies_[k].start, b);
          release(copies_[k].device, copies_[k].free, b);
        }
    }
  }
  for (int d = 0; d < nd_; ++d) {
    RadixSortByKey(&mem_rest_[d], &sweep_tmp_);
    const std::vector<MemEvent>& a = mem_chrono_[d];
    const std::vector<MemEvent>& b = mem_rest_[d];
    double cur = peak[d], best = peak[d];
    uint64_t best_key = 0;
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
      const bool take_b = i == a.size() || (j < b.size() && b[j].key <= a[i].key);
      const MemEvent& e = take_b ? b[j++] : a[i++];
      cur += e.delta;
      if (cur > best) {
        best = cur;
        best_key = e.key;
      }
    }
    peak[d] = best;
    const uint64_t bits = best_key >> 1;
    double pt;
    std::memcpy(&pt, &bits, sizeof pt);
    res_.peak_time[d] = pt;
    res_.utilisation[d] = res_.makespan > 0 ? res_.busy[d] / res_.makespan : 0;
    if (!res_.oom && best > cfg_.devices[d].memory_capacity) {
      res_.oom = true;
      res_.oom_device = d;
    }
  }
  return res_;
}

std::vector<Simulator::LiveTensor> Simulator::LiveAt(int d, double t) const {
  std::vector<LiveTensor> live;
  if (d < 0 || d >= nd_) throw ConfigError("LiveAt: device out of range");
  const int n = static_cast<int>(last_dev_.size());
  for (int o = 0; o < n; ++o) {
    const double s = res_.op_start[o], e = res_.op_end[o];
    if (last_dev_[o] == d) {
      if (g_.param_bytes[o] > 0) live.push_back({o, "params", g_.param_bytes[o]});
      if (g_.output_bytes[o] > 0 && s <= t && t < out_free_[o]) live.push_back({o, "output", g_.output_bytes[o]});
      if (g_.temp_bytes[o] > 0 && e > s && s <= t && t < e) live.push_back({o, "temp", g_.temp_bytes[o]});
    }
    if (g_.output_bytes[o] > 0)
      for (int k = copy_begin_[o]; k < copy_begin_[o] + copy_count_[o]; ++k)
        if (copies_[k].device == d && copies_[k].start <= t && t < copies_[k].free)
          live.push_back({o, "received copy", g_.output_bytes[o]});
  }
  std::stable_sort(live.begin(), live.end(), [](const LiveTensor& x, const LiveTensor& y) { return x.bytes > y.bytes; });
  return live;
}

SimResult SimulatePlacement(const graphs::ComputeGraph& graph,
                            const std::vector<int>& op_to_device, const SimConfig& config) {
  Simulator sim(graph, config);
  return sim.Run(op_to_device);
}

double BenchmarkSimulator(int num_ops, int devices, int reps) {
  const graphs::ComputeGraph g = graphs::MakeLayeredRandomGraph(num_ops, 100, 3, 1);
  std::vector<SimDevice> devs(devices, PlainDevice(1e13, 1e12));
  SimConfig cfg = BaechiConfig(devs);
  cfg.ready_list_order = false;  // measures the event-driven path (the general one)
  Simulator sim(g, cfg);
  std::vector<int> placement(num_ops);
  for (int i = 0; i < num_ops; ++i) placement[i] = i % devices;
  double sink = sim.Run(placement).makespan;  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) sink += sim.Run(placement).makespan;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!(sink >= 0)) return 0;  // keeps the runs observable
  return secs > 0 ? static_cast<double>(num_ops) * reps / secs : 0;
}

}  // namespace placerl::perf
