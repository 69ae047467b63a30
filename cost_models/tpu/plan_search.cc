#include "cost_models/tpu/plan_search.h"

#include <algorithm>
#include <cmath>

namespace placerl::perf {

namespace {
std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}
}  // namespace

std::vector<PlanC> EnumeratePlans(const TrainingEvaluator& ev, const PlanC& base) {
  std::vector<PlanC> out;
  const int n = ev.num_devices();
  const TransformerModel& m = ev.model();
  const Remat remats[3] = {REMAT_NONE, REMAT_MINIMAL, REMAT_FULL};
  for (int tp : Divisors(n)) {
    // 1-D tensor parallelism over heads; from 16 devices on also 2-D layouts tp_x × tp/tp_x
    // (d_model split tp_x-way, heads (tp/tp_x)-way), tp_x from 2 to tp/2.
    std::vector<int> txs;
    if (m.heads() % tp == 0) txs.push_back(1);
    if (tp >= 16 && m.num_experts() == 0)
      for (int tx : Divisors(tp))
        if (tx >= 2 && tx <= tp / 2 && m.heads() % (tp / tx) == 0 && m.d_model() % tx == 0)
          txs.push_back(tx);
    if (txs.empty()) continue;
    for (int tx : txs)
    for (int pp : Divisors(n / tp)) {
      if (pp > m.layers() || m.layers() % pp != 0) continue;
      for (int fsdp : Divisors(n / tp / pp)) {
        const int data = n / tp / pp / fsdp;
        const int bs = data * fsdp;
        if (base.global_batch < bs) continue;
        // In double: global_batch may exceed int (fuzzing: 8.9e14 cast to int is undefined).
        const double per_shard = std::floor(base.global_batch / bs);
        std::vector<int> mbs;
        if (pp == 1) {
          mbs.push_back(1);
        } else {
          for (int k : {1, 2, 4, 8})
            if (k * pp <= per_shard) mbs.push_back(k * pp);
          if (mbs.empty()) continue;
        }
        for (int mb : mbs)
          for (Remat r : remats)
            for (int shard = 0; shard <= (data > 1 ? 1 : 0); ++shard) {
              PlanC p = base;
              p.data = data;
              p.fsdp = fsdp;
              p.tensor = tp;
              p.tensor_x = tx;
              p.pipeline = pp;
              p.microbatches = mb;
              p.expert = 1;
              p.remat = r;
              p.shard_optimizer = shard == 1;
              out.push_back(p);
            }
      }
    }
  }
  return out;
}

std::vector<RankedPlan> SearchPlans(const TrainingEvaluator& ev, const PlanC& base, int top,
                                    SearchStats* stats) {
  std::vector<RankedPlan> all;
  SearchStats s;
  for (const PlanC& p : EnumeratePlans(ev, base)) {
    ++s.enumerated;
    StepBreakdown b = ev.Evaluate(p);
    if (!b.valid) continue;
    ++s.valid;
    if (b.oom) continue;
    ++s.fitting;
    all.push_back({p, b});
  }
  std::sort(all.begin(), all.end(), [](const RankedPlan& a, const RankedPlan& b) {
    return a.result.step_s < b.result.step_s;
  });
  if (int(all.size()) > top) all.resize(top);
  if (stats != nullptr) *stats = s;
  return all;
}

}  // namespace placerl::perf
