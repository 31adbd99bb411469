// Memory's in-flight count against the simulated step: the most (micro-batch, chunk) pairs a
// rank holds at once, from when the engine starts a pair's forward until it ends the pair's last
// weight-gradient work (a whole backward, or the W of a split one).
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>

#include "moesim/plan/memory.hpp"
#include "run_support.hpp"

using namespace moesim;

namespace {

int simulated_peak(const driver::RunResult& r, int stage) {
  const auto& st = r.sim.stages[static_cast<size_t>(stage)];
  const auto& tasks = r.program.stages[static_cast<size_t>(st.pp_rank)].tasks;
  std::map<std::pair<int, int>, std::pair<double, double>> held;  // (mb, chunk) -> (start, end)
  for (const auto& iv : st.timeline) {
    const workload::Task& t = tasks[static_cast<size_t>(iv.task)];
    if (t.kind != workload::TaskKind::compute || t.microbatch < 0) continue;
    auto [it, fresh] = held.try_emplace({t.microbatch, t.chunk},
                                        std::numeric_limits<double>::infinity(), -1.0);
    if (t.phase == workload::Phase::forward) it->second.first = std::min(it->second.first, iv.start_s);
    if (t.phase == workload::Phase::backward || t.phase == workload::Phase::weight_grad)
      it->second.second = std::max(it->second.second, iv.end_s);
  }
  int peak = 0;
  for (const auto& [k, a] : held) {
    int n = 0;  // pairs started by a's start and not yet released
    for (const auto& [k2, b] : held) n += b.first <= a.first && b.second > a.first ? 1 : 0;
    peak = std::max(peak, n);
  }
  return peak;
}

}  // namespace

TEST_CASE("Memory's in-flight count is the simulated step's most pairs held at once", "[engine][memory]") {
  for (const auto& [schedule, vpp] :
       std::vector<std::pair<std::string, int>>{{"1f1b", 1}, {"1f1b", 2}, {"zb-h1", 1}}) {
    Scenario s = test::uniform_dense(4, 8, vpp);
    s.layout.schedule = schedule;
    const auto r = test::recorded(s);
    for (int stage = 0; stage < static_cast<int>(r.sim.stages.size()); ++stage) {
      const int rank = r.sim.stages[static_cast<size_t>(stage)].pp_rank;
      INFO(schedule << " vpp " << vpp << " rank " << rank);
      CHECK(simulated_peak(r, stage) == plan::inflight_chunks(r.layout, rank));
    }
  }
}
