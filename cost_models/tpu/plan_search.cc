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

std::vector<PlanC> EnumeratePlans(const TrainingEvaluator& ev, const PlanC& base,
                                  const std::vector<std::string>* fixed, bool schedules) {
  auto is_fixed = [fixed](const char* key) {
    return fixed != nullptr && std::find(fixed->begin(), fixed->end(), key) != fixed->end();
  };
  const bool fix_data = is_fixed("data"), fix_fsdp = is_fixed("fsdp"), fix_tensor = is_fixed("tensor"),
             fix_tx = is_fixed("tensor_x"), fix_pipe = is_fixed("pipeline"), fix_mb = is_fixed("microbatches"),
             fix_remat = is_fixed("remat"), fix_shard = is_fixed("shard_optimizer"),
             fix_schedule = is_fixed("schedule"), fix_interleave = is_fixed("interleave");
  const int expert = is_fixed("expert") ? base.expert : 1;
  std::vector<PlanC> out;
  const int n = ev.num_devices();
  const TransformerModel& m = ev.model();
  const Remat remats[4] = {REMAT_NONE, REMAT_MINIMAL, REMAT_FULL, REMAT_SELECTIVE};
  const int n_remats = schedules ? 4 : 3;
  // The pipeline schedules of a stage count pp: {schedule, interleave}. Without `schedules` the
  // base's (1F1B, no interleaving by default); with it 1F1B, GPipe and interleaved 1F1B with
  // v = 2 and 4 model chunks per device where the layers divide into pp·v chunks.
  struct Sched {
    PipelineSchedule schedule;
    int interleave;
  };
  auto schedules_for = [&](int pp) {
    std::vector<Sched> v;
    if (!schedules || pp == 1) {
      v.push_back({base.schedule, pp == 1 ? 1 : base.interleave});
    } else {
      v.push_back({SCHEDULE_1F1B, 1});
      v.push_back({SCHEDULE_GPIPE, 1});
      for (int chunks : {2, 4})
        if (m.layers() % (static_cast<long long>(pp) * chunks) == 0) v.push_back({SCHEDULE_1F1B, chunks});
    }
    if (fix_schedule || fix_interleave) {
      std::vector<Sched> kept;
      for (const Sched& sc : v)
        if ((!fix_schedule || sc.schedule == base.schedule) && (!fix_interleave || sc.interleave == base.interleave))
          kept.push_back(sc);
      if (kept.empty()) kept.push_back({base.schedule, base.interleave});  // invalid plans say why
      v = kept;
    }
    return v;
  };
  for (int tp : Divisors(n)) {
    if (fix_tensor && tp != base.tensor) continue;
    // 1-D tensor parallelism over heads; from 16 devices on also 2-D layouts tp_x × tp/tp_x
    // (d_model split tp_x-way, heads (tp/tp_x)-way), tp_x from 2 to tp/2.
    // Block models: every attention sub-layer's heads (their gcd, tensor_heads()).
    std::vector<int> txs;
    const int heads = ev.tensor_heads();
    if (heads % tp == 0) txs.push_back(1);
    if (tp >= 16 && !ev.has_experts())
      for (int tx : Divisors(tp))
        if (tx >= 2 && tx <= tp / 2 && heads % (tp / tx) == 0 && m.d_model() % tx == 0)
          txs.push_back(tx);
    if (fix_tx) txs.assign(tp % base.tensor_x == 0 ? 1 : 0, base.tensor_x);
    if (txs.empty()) continue;
    for (int tx : txs)
    for (int pp : Divisors(n / tp)) {
      if (fix_pipe ? pp != base.pipeline : (pp > m.layers() || m.layers() % pp != 0)) continue;
      for (int fsdp : Divisors(n / tp / pp)) {
        const int data = n / tp / pp / fsdp;
        if ((fix_fsdp && fsdp != base.fsdp) || (fix_data && data != base.data)) continue;
        const int bs = data * fsdp;
        if (base.global_batch < bs) continue;
        // In double: global_batch may exceed int (fuzzing: 8.9e14 cast to int is undefined).
        const double per_shard = std::floor(base.global_batch / bs);
        std::vector<int> mbs;
        if (fix_mb) {
          mbs.push_back(base.microbatches);
        } else if (pp == 1) {
          mbs.push_back(1);
        } else {
          for (int k : {1, 2, 4, 8})
            if (k * pp <= per_shard) mbs.push_back(k * pp);
          if (mbs.empty()) continue;
        }
        const std::vector<Sched> scheds = schedules_for(pp);
        for (const Sched& sc : scheds)
        for (int mb : mbs)
          for (int ri = 0; ri < n_remats; ++ri)
            for (int shard = 0; shard <= (data > 1 ? 1 : 0); ++shard) {
              const Remat r0 = remats[ri];
              // A fixed remat is the base's, also one the search does not enumerate
              // (selective): it takes the first slot and the other two are skipped.
              const Remat r = fix_remat ? base.remat : r0;
              if (fix_remat && r0 != REMAT_NONE) continue;
              if (fix_shard && (shard == 1) != base.shard_optimizer) continue;
              PlanC p = base;
              p.data = data;
              p.fsdp = fsdp;
              p.tensor = tp;
              p.tensor_x = tx;
              p.pipeline = pp;
              p.microbatches = mb;
              p.expert = expert;
              p.remat = r;
              p.shard_optimizer = shard == 1;
              if (schedules || fix_schedule || fix_interleave) {
                p.schedule = sc.schedule;
                p.interleave = sc.interleave;
              }
              out.push_back(p);
            }
      }
    }
  }
  return out;
}

std::vector<RankedPlan> SearchPlans(const TrainingEvaluator& ev, const PlanC& base, int top,
                                    SearchStats* stats, const std::vector<std::string>* fixed, bool schedules) {
  std::vector<RankedPlan> all;
  SearchStats s;
  for (const PlanC& p : EnumeratePlans(ev, base, fixed, schedules)) {
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
  if (int(all.size()) > std::max(0, top)) all.resize(std::max(0, top));
  if (stats != nullptr) *stats = s;
  return all;
}

}  // namespace placerl::perf
