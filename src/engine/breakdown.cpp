#include "breakdown.hpp"

#include <algorithm>
#include <array>

namespace moesim::engine {

using workload::Activity;
using workload::TaskKind;

double Breakdown::total() const {
  return compute_s + host_overhead_s + optimizer_s + exposed_tp_s + exposed_ep_dispatch_s +
         exposed_ep_combine_s + exposed_pp_s + exposed_dp_s + bubble_s;
}

namespace {

// Lower value = charged first when several communications are in flight during an idle gap.
int priority(Activity a) {
  switch (a) {
    case Activity::ep_dispatch: return 0;
    case Activity::ep_combine: return 1;
    case Activity::tp_comm: return 2;
    case Activity::pp_comm: return 3;
    case Activity::dp_grad_sync: return 4;
    case Activity::dp_param_gather: return 5;
    case Activity::host_copy: return 6;
    default: return 7;
  }
}
constexpr int kCommKinds = 7;

}  // namespace

Breakdown attribute_time(const workload::RankProgram& program, const std::vector<TaskInterval>& intervals,
                         double step_end_s) {
  Breakdown b;
  struct Point {
    double t;
    int delta;   // +1 start, -1 end
    int kind;    // communication kind, or kCommKinds for compute
    bool operator<(const Point& o) const {
      if (t != o.t) return t < o.t;
      return delta < o.delta;  // ends before starts at the same instant
    }
  };
  std::vector<Point> points;
  points.reserve(2 * intervals.size());
  for (const TaskInterval& iv : intervals) {
    const workload::Task& task = program.tasks[iv.task];
    const double d = iv.end_s - iv.start_s;
    if (task.kind == TaskKind::compute) {
      if (task.activity == Activity::optimizer) {
        b.optimizer_s += d;
      } else {
        // The launch-bound part: how much longer the segment took than its kernels.
        const double host_excess = std::max(0.0, task.seconds - task.gpu_seconds);
        const double charged_host = std::min(host_excess, d);
        b.host_overhead_s += charged_host;
        b.compute_s += d - charged_host;
        b.recompute_s += std::min(task.recompute_seconds, d - charged_host);
      }
      points.push_back({iv.start_s, +1, kCommKinds});
      points.push_back({iv.end_s, -1, kCommKinds});
    } else if (d > 0) {
      const int kind = priority(task.activity);
      points.push_back({iv.start_s, +1, kind});
      points.push_back({iv.end_s, -1, kind});
    }
  }
  std::sort(points.begin(), points.end());
  std::array<int, kCommKinds + 1> active{};
  std::array<double, kCommKinds + 1> charged{};  // last slot: bubble
  double prev = 0;
  auto charge_gap = [&](double from, double to) {
    if (to <= from || active[kCommKinds] > 0) return;
    for (int k = 0; k < kCommKinds; ++k)
      if (active[k] > 0) {
        charged[k] += to - from;
        return;
      }
    charged[kCommKinds] += to - from;
  };
  for (const Point& p : points) {
    charge_gap(prev, std::min(p.t, step_end_s));
    prev = std::max(prev, std::min(p.t, step_end_s));
    active[p.kind] += p.delta;
  }
  charge_gap(prev, step_end_s);
  b.exposed_ep_dispatch_s = charged[0];
  b.exposed_ep_combine_s = charged[1];
  b.exposed_tp_s = charged[2];
  b.exposed_pp_s = charged[3];
  b.exposed_dp_s = charged[4] + charged[5];
  // The GPU waiting for offloaded activations to come back is host time too.
  b.host_overhead_s += charged[6];
  b.bubble_s = charged[kCommKinds];
  return b;
}

}  // namespace moesim::engine
