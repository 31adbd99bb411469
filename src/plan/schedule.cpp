// Megatron's (interleaved) 1F1B and ZB-H1, the schedule names, and the activations a schedule
// holds. DualPipe and ZB-V have files of their own.
#include "moesim/plan/schedule.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "moesim/config/specs.hpp"
#include "moesim/plan/layout.hpp"
#include "schedule_builders.hpp"

namespace moesim::plan {

namespace {

// Megatron-LM schedules.py: get_pp_rank_microbatches (warm-up count), get_schedule_table (the
// (micro-batch, chunk) order: pp micro-batches of chunk 0, the same ones on chunk 1, ...), and the
// steady state of forward_backward_pipelining_with[out]_interleaving: forward k + warm-up, then
// backward k, the backward running the chunks in reverse.
std::vector<ScheduleEntry> one_f_one_b(const Layout& l, int pp_rank) {
  const int pp = l.pp, chunks = l.chunks, m = l.microbatches;
  const int total = m * chunks;
  int warmup = l.interleaved ? (pp - pp_rank - 1) * 2 + (chunks - 1) * pp : pp - pp_rank - 1;
  // overlap_moe_expert_parallel_comm: "one extra micro-batch forward step before the 1f1b
  // stages ... to ensure the forward and backward computations are independent".
  if (l.combined_1f1b) warmup += 1;
  warmup = std::min(warmup, total);
  const int group = pp * chunks;  // micro-batches of one round over all chunks
  auto entry = [&](int k, Pass pass) {
    ScheduleEntry e;
    e.pass = pass;
    const int in_group = k % group;
    const int chunk = l.interleaved ? in_group / pp : 0;
    e.chunk = pass == Pass::forward ? chunk : chunks - 1 - chunk;
    e.microbatch = l.interleaved ? (k / group) * pp + in_group % pp : k;
    return e;
  };
  std::vector<ScheduleEntry> order;
  order.reserve(2 * total);
  for (int k = 0; k < warmup; ++k) order.push_back(entry(k, Pass::forward));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    order.push_back(entry(warmup + k, Pass::forward));
    ScheduleEntry b = entry(k, Pass::backward);
    b.paired = l.combined_1f1b;  // Megatron's combined 1F1B runs the two as one F&B step
    order.push_back(b);
  }
  for (int k = steady; k < total; ++k) order.push_back(entry(k, Pass::backward));
  return order;
}

// ZB-H1 as sail-sg's zb-h1-quick-start patches Megatron's non-interleaved 1F1B: rank r > 0 splits
// the backwards of its first r steady-state steps, its last steady-state one and every cool-down
// one into B and W, and runs each W r backwards later ("delay W by rank"), the rest at the end.
// Rank 0 never splits.
std::vector<ScheduleEntry> zb_h1(const Layout& l, int r) {
  const int m = l.microbatches;
  const int warmup = std::min(l.pp - r - 1, m);
  const int steady = m - warmup;
  std::vector<ScheduleEntry> order;
  order.reserve(3 * m);
  std::deque<int> pending;  // micro-batches whose W is still to run, oldest first
  int next_forward = 0, next_backward = 0;
  auto forward = [&] { order.push_back({Pass::forward, next_forward++, 0, false}); };
  auto backward = [&](bool split) {
    order.push_back({split ? Pass::input_grad : Pass::backward, next_backward, 0, false});
    if (split) pending.push_back(next_backward);
    ++next_backward;
  };
  auto weight = [&] {
    order.push_back({Pass::weight_grad, pending.front(), 0, false});
    pending.pop_front();
  };
  for (int k = 0; k < warmup; ++k) forward();
  for (int i = 0; i < steady; ++i) {
    const bool last = i == steady - 1;
    forward();
    backward((i < r || last) && r > 0);
    if (last && i >= r && r > 0) weight();
  }
  for (int i = 0; i < warmup; ++i) {
    backward(r > 0);
    if (r > 0 && steady + i >= r) weight();
  }
  while (!pending.empty()) weight();
  return order;
}

}  // namespace

std::string_view to_string(Schedule s) { return pipeline_schedule_names()[static_cast<size_t>(s)]; }

Schedule parse_schedule(std::string_view name) {
  const auto& names = pipeline_schedule_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Schedule>(i);
  throw std::invalid_argument("unknown pipeline schedule \"" + std::string(name) + "\"");
}

std::string_view to_string(Pass p) {
  switch (p) {
    case Pass::forward: return "forward";
    case Pass::backward: return "backward";
    case Pass::input_grad: return "input-gradient";
    case Pass::weight_grad: return "weight-gradient";
  }
  return "?";
}

std::vector<ScheduleEntry> pipeline_schedule(const Layout& l, int pp_rank) {
  switch (l.schedule) {
    case Schedule::one_f_one_b: return one_f_one_b(l, pp_rank);
    case Schedule::zb_h1: return zb_h1(l, pp_rank);
    case Schedule::zb_v: return detail::zb_v_schedule(l, pp_rank);
    case Schedule::dualpipe: return detail::dualpipe_schedule(l, pp_rank, false);
    case Schedule::dualpipe_v: return detail::dualpipe_schedule(l, pp_rank, true);
  }
  return {};
}

int InflightPeak::total() const {
  int n = 0;
  for (int c : per_chunk) n += c;
  return n;
}

InflightPeak inflight_peak(const Layout& l, int pp_rank, const std::vector<double>& chunk_weight) {
  std::vector<int> held(l.chunks, 0);
  InflightPeak peak;
  peak.per_chunk = held;
  double peak_weight = 0, weight = 0;
  auto w = [&](int c) { return c < static_cast<int>(chunk_weight.size()) ? chunk_weight[c] : 1.0; };
  for (const ScheduleEntry& e : pipeline_schedule(l, pp_rank)) {
    switch (e.pass) {
      case Pass::forward:
        ++held[e.chunk];
        weight += w(e.chunk);
        if (weight > peak_weight) {
          peak_weight = weight;
          peak.per_chunk = held;
        }
        break;
      case Pass::backward:
      case Pass::weight_grad:
        --held[e.chunk];
        weight -= w(e.chunk);
        break;
      case Pass::input_grad: break;  // the saved GEMM inputs stay for the W
    }
  }
  return peak;
}

}  // namespace moesim::plan
