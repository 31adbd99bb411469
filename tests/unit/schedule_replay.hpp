#pragma once
// Replaying a pipeline schedule's order with given pass times and free messages: the timing a
// schedule's paper derives its bubble from, computed here independently of the engine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "moesim/plan/layout.hpp"
#include "moesim/plan/schedule.hpp"

namespace moesim::test {

using plan::Pass;

// Pass times: F, B (input gradients) and W; a whole backward takes B + W. Messages are free.
struct Times {
  double f = 1, b = 1, w = 1;
};

struct Replay {
  double step = 0;                   // the last pass's end on any rank
  std::vector<double> busy, first, last;  // per rank: pass time, first start, last end
};

// Runs the ranks' orders as a GPU would: a pass starts when the rank is free and its input has
// arrived (the previous stage's forward, the next stage's backward, its own B for a W); an F&B
// pair starts when both of its inputs have (DualPipe's _forward_backward_chunk receives both,
// then computes).
inline Replay replay(const plan::Layout& l, Times t) {
  std::vector<std::vector<plan::ScheduleEntry>> orders;
  for (int r = 0; r < l.pp; ++r) orders.push_back(plan::pipeline_schedule(l, r));
  std::map<std::pair<int, int>, double> forward_done, gradient_done;  // (mb, stage) -> time
  std::map<std::tuple<int, int, int>, double> local_b_done;          // (rank, mb, chunk)
  Replay out;
  out.busy.assign(l.pp, 0);
  out.first.assign(l.pp, -1);
  out.last.assign(l.pp, 0);
  std::vector<size_t> next(l.pp, 0);
  const int stages = l.virtual_stages();
  // When entry e of rank r may start (its inputs' arrival), or -1 while one is missing.
  auto inputs_at = [&](int r, const plan::ScheduleEntry& e) {
    const int v = l.stage_index(r, e.chunk);
    auto at = [&](const std::map<std::pair<int, int>, double>& done, int stage) {
      auto it = done.find({e.microbatch, stage});
      return it == done.end() ? -1.0 : it->second;
    };
    if (e.pass == Pass::forward) return v > 0 ? at(forward_done, v - 1) : 0.0;
    if (e.pass == Pass::weight_grad) return local_b_done.at({r, e.microbatch, e.chunk});
    const double own = at(forward_done, v);
    const double next_stage = v < stages - 1 ? at(gradient_done, v + 1) : 0.0;
    return own < 0 || next_stage < 0 ? -1.0 : std::max(own, next_stage);
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < l.pp; ++r)
      while (next[r] < orders[r].size()) {
        const plan::ScheduleEntry& e = orders[r][next[r]];
        double ready = inputs_at(r, e);
        const bool pair = next[r] + 1 < orders[r].size() && orders[r][next[r] + 1].paired;
        if (pair && ready >= 0) {
          const double partner = inputs_at(r, orders[r][next[r] + 1]);
          ready = partner < 0 ? -1.0 : std::max(ready, partner);
        }
        if (ready < 0) break;
        for (size_t k = next[r]; k <= next[r] + (pair ? 1 : 0); ++k) {
          const plan::ScheduleEntry& x = orders[r][k];
          const int v = l.stage_index(r, x.chunk);
          const double start = std::max(out.last[r], ready);
          const double duration = x.pass == Pass::forward       ? t.f
                                  : x.pass == Pass::weight_grad ? t.w
                                  : x.pass == Pass::backward    ? t.b + t.w
                                                                : t.b;
          const double end = start + duration;
          if (x.pass == Pass::forward) forward_done[{x.microbatch, v}] = end;
          if (x.pass == Pass::backward || x.pass == Pass::input_grad) {
            gradient_done[{x.microbatch, v}] = end;
            local_b_done[{r, x.microbatch, x.chunk}] = end;
          }
          if (out.first[r] < 0) out.first[r] = start;
          out.last[r] = end;
          out.busy[r] += duration;
        }
        next[r] += pair ? 2 : 1;
        progress = true;
      }
  }
  for (int r = 0; r < l.pp; ++r) {
    INFO("rank " << r << " stuck at entry " << next[r]);
    REQUIRE(next[r] == orders[r].size());
    out.step = std::max(out.step, out.last[r]);
  }
  return out;
}

// Idle time of a rank within the step: every rank does the same work, so this is the bubble.
inline double bubble(const Replay& x, int rank = 0) { return x.step - x.busy[rank]; }


}  // namespace moesim::test
