// Megatron-LM's pipeline schedules: the order in which a pipeline rank runs forward and
// backward passes of (micro-batch, model chunk) pairs.
#include <algorithm>

#include "moesim/workload/step_builder.hpp"

namespace moesim::workload {

std::vector<ScheduleEntry> pipeline_schedule(const plan::Layout& l, int pp_rank) {
  const int pp = l.pp, vpp = l.vpp, m = l.microbatches;
  const int total = m * vpp;
  // Warm-up forwards before the first backward (schedules.py, get_pp_rank_microbatches).
  const int warmup = l.interleaved ? std::min((pp - pp_rank - 1) * 2 + (vpp - 1) * pp, total)
                                   : std::min(pp - pp_rank - 1, m);
  const int group = pp * vpp;  // micro-batches of one round over all chunks
  auto entry = [&](int k, Phase phase) {
    ScheduleEntry e;
    e.phase = phase;
    const int in_group = k % group;
    const int chunk = l.interleaved ? in_group / pp : 0;
    e.chunk = phase == Phase::forward ? chunk : vpp - 1 - chunk;
    e.microbatch = l.interleaved ? (k / group) * pp + in_group % pp : k;
    return e;
  };
  std::vector<ScheduleEntry> order;
  order.reserve(2 * total);
  for (int k = 0; k < warmup; ++k) order.push_back(entry(k, Phase::forward));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    order.push_back(entry(warmup + k, Phase::forward));
    ScheduleEntry b = entry(k, Phase::backward);
    b.paired = true;
    order.push_back(b);
  }
  for (int k = steady; k < total; ++k) order.push_back(entry(k, Phase::backward));
  return order;
}

}  // namespace moesim::workload
