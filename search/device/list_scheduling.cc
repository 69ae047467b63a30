// m-ETF and m-SCT (Baechi, device_placement_notes.md §4): one event-driven list scheduler that
// places ops as it schedules them, with Baechi's transfer model and the static memory ledger;
// m-SCT adds the favourite-child LP (GLPK) and the AWAKE rule.
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "datasets/util/errors.h"
#include "search/device/baseline_common.h"
#include "search/device/baselines.h"

namespace placerl::search {
namespace {

using device_internal::MemoryLedger;
using device_internal::PlacementContext;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Scheduler state is one clock t. At t, devices whose op has ended release it (its consumers
// may become ready); then, repeatedly, every free device proposes the ready op it would run
// and the proposal of smallest (start, topological position) is committed (lowest device on
// ties) — Baechi's ETF step — until no device proposes an op that can start by t; then t moves
// to the next time anything can happen.
class ListScheduler {
 public:
  ListScheduler(const PlacementContext& ctx, MemoryLedger* ledger,
                const std::vector<int>* favourite, const char* method, MemoryAccounting memory)
      : ctx_(ctx),
        g_(ctx.g),
        ledger_(*ledger),
        favourite_(favourite),
        method_(method),
        nd_(ctx.num_devices),
        end_(ctx.num_ops, 0),
        remaining_(ctx.num_ops, 0),
        ready_index_(ctx.num_ops, -1),
        arrival_(static_cast<size_t>(ctx.num_ops) * ctx.num_devices, -1.0),
        chan_(nd_, 0),
        dev_free_(nd_, 0),
        running_(nd_, -1),
        last_op_(nd_, -1),
        scheduled_memory_(memory == MemoryAccounting::kSchedule) {
    if (scheduled_memory_) {
      live_.assign(nd_, 0);
      consumers_left_.resize(ctx.num_ops);
      copy_on_.assign(static_cast<size_t>(ctx.num_ops) * nd_, 0);
      stamp_.assign(ctx.num_ops, 0);
      group_params_.assign(ctx.group_ops.size(), 0);
      for (int i = 0; i < ctx.num_ops; ++i) {
        consumers_left_[i] = g_.out_offsets[i + 1] - g_.out_offsets[i];
        group_params_[g_.coloc_group[i]] += g_.param_bytes[i];
      }
    }
  }

  void Run() {
    const int n = ctx_.num_ops;
    for (int i = 0; i < n; ++i) {
      remaining_[i] = g_.in_offsets[i + 1] - g_.in_offsets[i];
      if (remaining_[i] == 0) AddReady(i);
    }
    int scheduled = 0;
    double t = 0;
    while (true) {
      Advance(t);
      FillTable(t);
      int pick_op = -1, pick_dev = -1;
      double pick_ts = kInf;
      double next = kInf;
      for (int d = 0; d < nd_; ++d) {
        if (running_[d] >= 0) {
          next = std::min(next, dev_free_[d]);
          continue;
        }
        int op = -1;
        double ts = kInf, wake = kInf;
        Propose(d, t, &op, &ts, &wake);
        if (op < 0) {
          next = std::min(next, wake);
          continue;
        }
        if (ts < pick_ts || (ts == pick_ts && ctx_.topo_pos[op] < ctx_.topo_pos[pick_op])) {
          pick_op = op;
          pick_dev = d;
          pick_ts = ts;
        }
      }
      if (pick_op >= 0) {
        Commit(pick_op, pick_dev, t);
        ++scheduled;
        continue;
      }
      if (next == kInf) break;
      t = next;
    }
    if (scheduled != n) {
      if (scheduled_memory_ && !ready_.empty())
        throw InfeasibleAction(std::string(method_) + ": op '" + g_.names[ready_.front()] +
                               "' and " + std::to_string(ready_.size() - 1) +
                               " other ready ops fit on no device at this point of the schedule");
      for (int op : ready_) {
        const int group = g_.coloc_group[op];
        if (ledger_.DeviceOf(op) < 0) throw InfeasibleAction(ledger_.NoRoomMessage(method_, group));
      }
      throw InfeasibleAction(std::string(method_) + ": could not schedule every op");
    }
  }

 private:
  void AddReady(int op) {
    ready_index_[op] = static_cast<int>(ready_.size());
    ready_.push_back(op);
  }
  void RemoveReady(int op) {
    const int k = ready_index_[op];
    ready_[k] = ready_.back();
    ready_index_[ready_[k]] = k;
    ready_.pop_back();
    ready_index_[op] = -1;
  }

  // Ops whose device has reached their end finish now; their consumers may become ready.
  void Advance(double t) {
    for (int d = 0; d < nd_; ++d) {
      const int op = running_[d];
      if (op < 0 || dev_free_[d] > t) continue;
      running_[d] = -1;
      for (int k = g_.out_offsets[op]; k < g_.out_offsets[op + 1]; ++k) {
        const int c = g_.out_targets[k];
        if (--remaining_[c] == 0) AddReady(c);
      }
    }
  }

  // When op's inputs are all on d: a producer on d is ready at its end; a remote tensor is
  // sent once per device over the sender's and the receiver's channel (Baechi's DeviceWrapper).
  // `commit` books the channels and caches the arrivals.
  double DataReady(int op, int d, bool commit) {
    double ready = 0;
    for (int k = g_.in_offsets[op]; k < g_.in_offsets[op + 1]; ++k) {
      const int p = g_.in_sources[k];
      const int dp = ledger_.DeviceOf(p);
      double at;
      const size_t key = static_cast<size_t>(p) * nd_ + d;
      if (dp == d) {
        at = end_[p];
      } else if (arrival_[key] >= 0) {
        at = arrival_[key];
      } else {
        const double send = std::max(end_[p], chan_[dp]);
        const double recv = std::max(send, chan_[d]);
        at = recv + ctx_.comm[p];
        if (commit) {
          chan_[dp] = send + ctx_.comm[p];
          chan_[d] = at;
          arrival_[key] = at;
        }
      }
      ready = std::max(ready, at);
    }
    return ready;
  }

  // sched_[r * nd + d]: when ready op r could start on d (∞ when its group is placed elsewhere
  // or does not fit on d); urgent_[r]: the latest of those over the devices it may use.
  void FillTable(double t) {
    const size_t r_count = ready_.size();
    sched_.assign(r_count * nd_, kInf);
    urgent_.assign(r_count, kInf);
    for (size_t r = 0; r < r_count; ++r) {
      const int op = ready_[r];
      const int placed = ledger_.DeviceOf(op);
      double latest = -kInf;
      for (int d = 0; d < nd_; ++d) {
        if (placed >= 0 && placed != d) continue;
        if (scheduled_memory_ ? !FitsNow(op, d, placed < 0)
                              : placed < 0 && !ledger_.Fits(g_.coloc_group[op], d))
          continue;
        const double s = std::max(DataReady(op, d, false), std::max(dev_free_[d], t));
        sched_[r * nd_ + d] = s;
        latest = std::max(latest, s);
      }
      if (latest > -kInf) urgent_[r] = latest;
    }
  }

  bool Before(double ts_a, int op_a, double ts_b, int op_b) const {
    return ts_a < ts_b || (ts_a == ts_b && ctx_.topo_pos[op_a] < ctx_.topo_pos[op_b]);
  }

  // What free device d runs at t (op, its start) or, when nothing, when it may (wake).
  void Propose(int d, double t, int* op_out, double* ts_out, double* wake) {
    const size_t r_count = ready_.size();
    int fc_r = -1;
    if (favourite_ != nullptr && last_op_[d] >= 0) {
      const int fc = (*favourite_)[last_op_[d]];
      if (fc >= 0 && ledger_.DeviceOf(fc) < 0 && ready_index_[fc] >= 0) {
        const size_t r = ready_index_[fc];
        const double mine = sched_[r * nd_ + d];
        double best = kInf;
        for (int e = 0; e < nd_; ++e) best = std::min(best, sched_[r * nd_ + e]);
        if (mine < kInf && mine == best) fc_r = static_cast<int>(r);
      }
    }
    if (fc_r >= 0) {
      // AWAKE (m-SCT): run an op that can start nowhere later than now, else wait for the
      // favourite child of the op this device just ran.
      int urgent = -1;
      for (size_t r = 0; r < r_count; ++r) {
        if (sched_[r * nd_ + d] == kInf) continue;
        if (urgent < 0 || Before(urgent_[r], ready_[r], urgent_[urgent], ready_[urgent]))
          urgent = static_cast<int>(r);
      }
      if (urgent >= 0 && urgent_[urgent] <= t) {
        *op_out = ready_[urgent];
        *ts_out = sched_[urgent * nd_ + d];
        return;
      }
      const double fc_ts = sched_[fc_r * nd_ + d];
      if (fc_ts <= t) {
        *op_out = ready_[fc_r];
        *ts_out = fc_ts;
        return;
      }
      *wake = std::min(fc_ts, urgent >= 0 ? urgent_[urgent] : kInf);
      return;
    }
    int best = -1;
    for (size_t r = 0; r < r_count; ++r) {
      const double s = sched_[r * nd_ + d];
      if (s == kInf) continue;
      if (best < 0 || Before(s, ready_[r], sched_[best * nd_ + d], ready_[best]))
        best = static_cast<int>(r);
    }
    if (best < 0) return;
    const double s = sched_[best * nd_ + d];
    if (s <= t) {
      *op_out = ready_[best];
      *ts_out = s;
    } else {
      *wake = s;
    }
  }

  // MemoryAccounting::kSchedule (Baechi's ETFDevice): a device holds the parameters of the
  // groups placed on it for the whole step and each output from its op's start until every
  // consumer has started (received copies likewise); an op may start on d when its output,
  // temp, new input copies (and its group's parameters if not placed yet) fit in what is free.
  bool FitsNow(int op, int d, bool place_group) {
    double need = g_.output_bytes[op] + g_.temp_bytes[op];
    if (place_group) need += group_params_[g_.coloc_group[op]];
    ++stamp_now_;
    for (int k = g_.in_offsets[op]; k < g_.in_offsets[op + 1]; ++k) {
      const int p = g_.in_sources[k];
      if (ledger_.DeviceOf(p) == d || copy_on_[static_cast<size_t>(p) * nd_ + d] ||
          stamp_[p] == stamp_now_)
        continue;
      stamp_[p] = stamp_now_;
      need += g_.output_bytes[p];
    }
    return live_[d] + need <= ctx_.capacity[d];
  }

  void BookScheduledMemory(int op, int d, bool place_group) {
    if (place_group) live_[d] += group_params_[g_.coloc_group[op]];
    for (int k = g_.in_offsets[op]; k < g_.in_offsets[op + 1]; ++k) {
      const int p = g_.in_sources[k];
      char& copy = copy_on_[static_cast<size_t>(p) * nd_ + d];
      if (ledger_.DeviceOf(p) != d && !copy) {
        copy = 1;
        live_[d] += g_.output_bytes[p];
      }
    }
    live_[d] += g_.output_bytes[op];  // temp is allocated and freed within the op
    for (int k = g_.in_offsets[op]; k < g_.in_offsets[op + 1]; ++k) {
      const int p = g_.in_sources[k];
      if (--consumers_left_[p] > 0) continue;
      live_[ledger_.DeviceOf(p)] -= g_.output_bytes[p];
      for (int e = 0; e < nd_; ++e) {
        char& copy = copy_on_[static_cast<size_t>(p) * nd_ + e];
        if (copy) {
          live_[e] -= g_.output_bytes[p];
          copy = 0;
        }
      }
    }
  }

  void Commit(int op, int d, double t) {
    const bool place_group = ledger_.DeviceOf(op) < 0;
    if (scheduled_memory_) BookScheduledMemory(op, d, place_group);
    if (place_group) ledger_.Place(g_.coloc_group[op], d);
    const double start = std::max({DataReady(op, d, true), dev_free_[d], t});
    end_[op] = start + ctx_.Time(op, d);
    dev_free_[d] = end_[op];
    running_[d] = op;
    last_op_[d] = op;
    RemoveReady(op);
  }

  const PlacementContext& ctx_;
  const graphs::ComputeGraph& g_;
  MemoryLedger& ledger_;
  const std::vector<int>* favourite_;
  const char* method_;
  int nd_;
  std::vector<double> end_;
  std::vector<int> remaining_, ready_, ready_index_;
  std::vector<double> arrival_, chan_, dev_free_;
  std::vector<int> running_, last_op_;
  bool scheduled_memory_;
  std::vector<double> live_, group_params_;
  std::vector<int> consumers_left_, stamp_;
  std::vector<char> copy_on_;
  int stamp_now_ = 0;
  std::vector<double> sched_, urgent_;
};

}  // namespace

std::vector<int> PlaceMEtf(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const MEtfOptions& options) {
  PlacementContext ctx(g, cfg);
  MemoryLedger ledger(ctx);
  ListScheduler(ctx, &ledger, nullptr, "m-ETF", options.memory).Run();
  return ledger.Placement();
}

namespace {

// Solves the LP on the ops `window` (topological positions [begin, end)) and the edges between
// them; writes x of those edges and the ops' start times (offset by `t0_us`) into `sol`;
// returns the window's makespan (µs).
double SolveLpWindow(const PlacementContext& ctx, int begin, int end, double t0_us,
                     std::vector<int>* local, SctLpSolution* sol) {
  const graphs::ComputeGraph& g = ctx.g;
  const int n = end - begin;
  for (int k = 0; k < n; ++k) (*local)[g.topo_order[begin + k]] = k;
  // Edges of the window: (global edge id, producer local, consumer local).
  std::vector<int> edge_id, edge_from, edge_to;
  std::vector<int> out_count(n, 0), in_count(n, 0);
  for (int k = 0; k < n; ++k) {
    const int i = g.topo_order[begin + k];
    for (int e = g.out_offsets[i]; e < g.out_offsets[i + 1]; ++e) {
      const int lj = (*local)[g.out_targets[e]];
      if (lj < 0) continue;
      edge_id.push_back(e);
      edge_from.push_back(k);
      edge_to.push_back(lj);
      ++out_count[k];
      ++in_count[lj];
    }
  }
  const int ne = static_cast<int>(edge_id.size());
  // Microseconds keep the coefficients near 1 for GLPK's absolute tolerances.
  auto us = [](double s) { return s * 1e6; };
  auto p_us = [&](int k) { return us(ctx.mean_time[g.topo_order[begin + k]]); };
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  // Columns: x_e (1..ne), s_k (ne+1..ne+n), w (ne+n+1).
  glp_add_cols(lp, ne + n + 1);
  for (int e = 1; e <= ne; ++e) glp_set_col_bnds(lp, e, GLP_DB, 0.0, 1.0);
  for (int k = 0; k < n; ++k) glp_set_col_bnds(lp, ne + 1 + k, GLP_LO, 0.0, 0.0);
  const int w_col = ne + n + 1;
  glp_set_col_bnds(lp, w_col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, w_col, 1.0);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  struct RowBounds {
    int type;
    double lb, ub;
  };
  std::vector<RowBounds> rows;
  auto add_row = [&](int type, double lb, double ub) { rows.push_back({type, lb, ub}); };
  auto add_coef = [&](int col, double v) {
    ia.push_back(static_cast<int>(rows.size()));
    ja.push_back(col);
    ar.push_back(v);
  };
  std::vector<std::vector<int>> out_edges(n), in_edges(n);
  for (int e = 0; e < ne; ++e) {
    const int i = edge_from[e], j = edge_to[e];
    out_edges[i].push_back(e);
    in_edges[j].push_back(e);
    // s_i − s_j + c_i·x_e ≤ −p_i
    add_row(GLP_UP, 0.0, -p_us(i));
    add_coef(ne + 1 + i, 1.0);
    add_coef(ne + 1 + j, -1.0);
    add_coef(e + 1, us(ctx.comm[g.topo_order[begin + i]]));
  }
  for (int k = 0; k < n; ++k) {
    if (out_count[k] >= 2) {  // at most one favourite child (trivial for one consumer)
      add_row(GLP_LO, out_count[k] - 1.0, 0.0);
      for (int e : out_edges[k]) add_coef(e + 1, 1.0);
    }
    if (in_count[k] >= 2) {  // favourite child of at most one producer
      add_row(GLP_LO, in_count[k] - 1.0, 0.0);
      for (int e : in_edges[k]) add_coef(e + 1, 1.0);
    }
    // s_k + p_k ≤ w; only needed at sinks (an edge row already orders every other op before
    // a sink), which keeps the makespan column short.
    if (out_count[k] == 0) {
      add_row(GLP_UP, 0.0, -p_us(k));
      add_coef(ne + 1 + k, 1.0);
      add_coef(w_col, -1.0);
    }
  }
  const int num_rows = static_cast<int>(rows.size());
  glp_add_rows(lp, num_rows);
  for (int r = 0; r < num_rows; ++r) glp_set_row_bnds(lp, r + 1, rows[r].type, rows[r].lb, rows[r].ub);
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  // Dual simplex: 2.2× less CPU than primal on layered(ops=1000); GLPK's interior point does
  // not converge on this LP.
  parm.meth = GLP_DUALP;
  const int rc = glp_simplex(lp, &parm);
  const int status = glp_get_status(lp);
  if (rc != 0 || status != GLP_OPT) {
    glp_delete_prob(lp);
    throw ConfigError("m-SCT: the favourite-child LP was not solved (GLPK code " +
                      std::to_string(rc) + ", status " + std::to_string(status) + ")");
  }
  for (int e = 0; e < ne; ++e) sol->edge_x[edge_id[e]] = glp_get_col_prim(lp, e + 1);
  for (int k = 0; k < n; ++k)
    sol->start_us[g.topo_order[begin + k]] = t0_us + glp_get_col_prim(lp, ne + 1 + k);
  const double makespan = glp_get_col_prim(lp, w_col);
  glp_delete_prob(lp);
  for (int k = 0; k < n; ++k) (*local)[g.topo_order[begin + k]] = -1;
  return makespan;
}

SctLpSolution SolveLp(const PlacementContext& ctx, double threshold, int window_ops) {
  if (!(threshold >= 0 && threshold <= 1))
    throw ConfigError("m-SCT: threshold must be in [0, 1]");
  if (window_ops < 0) throw ConfigError("m-SCT: lp_window_ops must be >= 0");
  const graphs::ComputeGraph& g = ctx.g;
  const int n = g.num_ops(), ne = g.num_edges();
  const int window = window_ops == 0 ? n : window_ops;
  SctLpSolution sol;
  sol.edge_x.assign(ne, 1.0);  // edges between windows are never favourite
  sol.start_us.assign(n, 0.0);
  std::vector<int> local(n, -1);
  for (int begin = 0; begin < n; begin += window) {
    const double w = SolveLpWindow(ctx, begin, std::min(n, begin + window), sol.makespan_us,
                                   &local, &sol);
    sol.makespan_us += w;
  }
  // Round: favourite iff x ≤ threshold (Baechi: round(x − t + 0.5) == 0). Edges in CSR order;
  // the last favourite edge of an op or into an op wins.
  sol.favourite_child.assign(n, -1);
  std::vector<int> parent(n, -1);
  for (int i = 0; i < n; ++i) {
    for (int e = g.out_offsets[i]; e < g.out_offsets[i + 1]; ++e) {
      if (!(sol.edge_x[e] <= threshold)) continue;
      const int j = g.out_targets[e];
      if (sol.favourite_child[i] >= 0) parent[sol.favourite_child[i]] = -1;
      if (parent[j] >= 0) sol.favourite_child[parent[j]] = -1;
      sol.favourite_child[i] = j;
      parent[j] = i;
    }
  }
  return sol;
}

}  // namespace

SctLpSolution SolveSctLp(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                         double threshold, int lp_window_ops) {
  return SolveLp(PlacementContext(g, cfg), threshold, lp_window_ops);
}

std::vector<int> PlaceMSctWithFavourites(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                                         const std::vector<int>& favourite_child,
                                         MemoryAccounting memory) {
  const int n = g.num_ops();
  if (static_cast<int>(favourite_child.size()) != n)
    throw ConfigError("m-SCT: favourite children: one entry per op needed");
  std::vector<char> is_favourite(n, 0);
  for (int i = 0; i < n; ++i) {
    const int j = favourite_child[i];
    if (j < 0) continue;
    const bool consumer =
        j < n && std::binary_search(g.out_targets.begin() + g.out_offsets[i],
                                    g.out_targets.begin() + g.out_offsets[i + 1], j);
    if (!consumer || is_favourite[j])
      throw ConfigError("m-SCT: favourite child of op '" + g.names[i] +
                        "' is not a consumer of it or is another op's favourite");
    is_favourite[j] = 1;
  }
  PlacementContext ctx(g, cfg);
  MemoryLedger ledger(ctx);
  ListScheduler(ctx, &ledger, &favourite_child, "m-SCT", memory).Run();
  return ledger.Placement();
}

std::vector<int> PlaceMSct(const graphs::ComputeGraph& g, const perf::SimConfig& cfg,
                           const MSctOptions& options) {
  PlacementContext ctx(g, cfg);
  const SctLpSolution lp = SolveLp(ctx, options.threshold, options.lp_window_ops);
  MemoryLedger ledger(ctx);
  ListScheduler(ctx, &ledger, &lp.favourite_child, "m-SCT", options.memory).Run();
  return ledger.Placement();
}

}  // namespace placerl::search
