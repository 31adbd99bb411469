// Whole simulated steps under each pipeline schedule: with free communication the engine's step
// is the schedule replayed with the passes' costs, the 1F1B and ZB1P rows of the DeepSeek-V3
// report's Table 2 hold on it, memory's in-flight count is what the simulated timeline holds,
// and folded and full fidelity agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "moesim/plan/memory.hpp"
#include "run_support.hpp"
#include "schedule_replay.hpp"

using namespace moesim;
using workload::Phase;

namespace {

struct Case {
  std::string schedule;
  int vpp;
};
const std::vector<Case> kCases = {{"1f1b", 1}, {"1f1b", 2}, {"zb-h1", 1}, {"zb-v", 2}, {"dualpipe", 1}, {"dualpipev", 2}};

Scenario uniform(const Case& c, int pp, int microbatches) {
  Scenario s = test::without_network_cost(test::uniform_dense(pp, microbatches, c.vpp));
  s.layout.schedule = c.schedule;
  return s;
}

// Seconds of the compute tasks of one pass of (micro-batch, chunk) on a rank.
double pass_seconds(const workload::RankProgram& p, Phase phase, int mb, int chunk) {
  double s = 0;
  for (const auto& t : p.tasks)
    if (t.kind == workload::TaskKind::compute && t.phase == phase && t.microbatch == mb && t.chunk == chunk)
      s += t.seconds;
  return s;
}

// F, B (input part) and W of a middle rank's passes as the program prices them; without a split
// backward, B is the whole backward and W nothing.
test::Times priced_times(const workload::StepProgram& prog, int rank) {
  const auto& p = prog.stages[rank];
  test::Times t{pass_seconds(p, Phase::forward, 0, 0), 0, 0};
  for (const auto& task : p.tasks) {
    if (task.phase == Phase::input_grad) {
      t.b = pass_seconds(p, Phase::input_grad, task.microbatch, task.chunk);
      t.w = pass_seconds(p, Phase::weight_grad, task.microbatch, task.chunk);
      return t;
    }
  }
  for (const auto& task : p.tasks)
    if (task.phase == Phase::backward) {
      t.b = pass_seconds(p, Phase::backward, task.microbatch, task.chunk);
      break;
    }
  return t;
}

double busy_s(const engine::StageResult& st) { return st.breakdown.compute_s + st.breakdown.host_overhead_s; }

}  // namespace

TEST_CASE("With free communication the engine runs each schedule as its replay", "[engine][schedule]") {
  for (const Case& c : kCases) {
    INFO(c.schedule << " vpp " << c.vpp);
    const auto r = test::recorded(uniform(c, 4, 8));
    const test::Times t = priced_times(r.program, 1);
    const test::Replay x = test::replay(r.layout, t);
    const double optimizer = r.sim.stages[0].breakdown.optimizer_s;
    // The replay prices every chunk alike; the first and last stages' embedding and 8-token
    // vocabulary head add a little.
    CHECK(r.metrics.step_time_s - optimizer == Approx(x.step).epsilon(0.01));
  }
}

TEST_CASE("Table 2 rows 1F1B and ZB1P hold in the engine with free communication", "[engine][schedule]") {
  for (int pp : {2, 4})
    for (int m : {8, 16})
      for (const std::string schedule : {"1f1b", "zb-h1"}) {
        const auto r = test::recorded(uniform({schedule, 1}, pp, m));
        const test::Times t = priced_times(r.program, pp - 1);
        const double full_b = t.b + t.w;
        // DSV3 Table 2: 1F1B (PP-1)(F+B), ZB1P (PP-1)(F+B-2W), B the whole backward.
        const double expected = schedule == "1f1b" ? (pp - 1) * (t.f + full_b) : (pp - 1) * (t.f + full_b - 2 * t.w);
        const auto& st = r.sim.stages[pp - 1];
        INFO(schedule << " pp " << pp << " m " << m);
        CHECK(r.metrics.step_time_s - st.breakdown.optimizer_s - busy_s(st) == Approx(expected).epsilon(0.02));
      }
}

TEST_CASE("Memory's in-flight count is the most activations the simulated step holds", "[engine][schedule]") {
  for (const Case& c : kCases) {
    const Scenario s = uniform(c, 4, 8);
    const auto r = test::recorded(s);
    for (const auto& st : r.sim.stages) {
      // From the timeline: a (micro-batch, chunk) holds activations from its forward's first
      // task until its last weight gradients (a whole backward's or its W's last task).
      const auto& tasks = r.program.stages[st.pp_rank].tasks;
      std::map<std::pair<int, int>, double> start, end;
      for (const auto& iv : st.timeline) {
        const auto& t = tasks[iv.task];
        if (t.kind != workload::TaskKind::compute || t.microbatch < 0) continue;
        const auto key = std::make_pair(t.microbatch, static_cast<int>(t.chunk));
        if (t.phase == Phase::forward)
          start[key] = start.count(key) ? std::min(start[key], iv.start_s) : iv.start_s;
        if (t.phase == Phase::backward || t.phase == Phase::weight_grad) end[key] = std::max(end[key], iv.end_s);
      }
      std::vector<std::pair<double, int>> events;  // (time, +1 / -1); a release before a start at a tie
      for (const auto& [key, t0] : start) events.emplace_back(t0, +1);
      for (const auto& [key, t1] : end) events.emplace_back(t1, -1);
      std::sort(events.begin(), events.end());
      int held = 0, peak = 0;
      for (const auto& [time, d] : events) peak = std::max(peak, held += d);
      INFO(c.schedule << " vpp " << c.vpp << " pp rank " << st.pp_rank);
      CHECK(plan::rank_memory(s, r.layout, st.pp_rank).inflight_chunks == peak);
    }
  }
}

TEST_CASE("DualPipe overlaps a forward with another micro-batch's backward and their all-to-alls",
          "[engine][schedule]") {
  Scenario s = test::small_moe(4);
  s.layout.schedule = "dualpipe";
  s.training.global_batch = 256;  // dp 32: 8 micro-batches, 4 entering at each end
  s.recipe.ep_overlap = true;
  const auto overlapped = test::run(s);
  s.recipe.ep_overlap = false;
  const auto sequential = test::run(s);
  const auto exposed = [](const driver::RunResult& r) {
    double e = 0;
    for (const auto& st : r.sim.stages) e += st.breakdown.exposed_ep_dispatch_s + st.breakdown.exposed_ep_combine_s;
    return e;
  };
  CHECK(overlapped.metrics.step_time_s < sequential.metrics.step_time_s);
  CHECK(exposed(overlapped) < exposed(sequential));
}

TEST_CASE("Folded and full fidelity agree under zb-h1, zb-v, dualpipe and dualpipev", "[engine][schedule]") {
  for (const Case& c : {Case{"zb-h1", 1}, Case{"zb-v", 2}, Case{"dualpipe", 1}, Case{"dualpipev", 2}}) {
    Scenario s = test::small_moe(4);
    s.layout.schedule = c.schedule;
    s.layout.vpp = c.vpp;
    s.training.global_batch = 128;  // 4 micro-batches: at least 2 pp
    s.recipe.ep_overlap = c.schedule.rfind("dualpipe", 0) == 0;  // zb-h1 and zb-v have no F&B pairs
    s.recipe.overlap_grad_reduce = true;  // dualpipe: each stage's gradients over both copies
    const auto folded = test::run(s, platform::Fidelity::folded);
    const auto full = test::run(s, platform::Fidelity::full);
    INFO(c.schedule);
    CHECK(full.sim.simulated_gpus == 64);
    CHECK(full.metrics.step_time_s == Approx(folded.metrics.step_time_s).epsilon(0.01));
  }
}
