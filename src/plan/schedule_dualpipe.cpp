// DualPipe and DualPipeV: the eight steps of DualPipe.step() (deepseek-ai/DualPipe, dualpipe.py
// and dualpipev.py) as one rank issues them.
//
// DualPipe: ranks r and pp-1-r form a pair; micro-batches 0 .. m/2-1 enter at rank 0 and run the
// stages 0..pp-1 on ranks 0..pp-1 (chunk 0), micro-batches m/2 .. m-1 enter at rank pp-1 and run
// them on ranks pp-1..0 (chunk 1). "Phase 0" of a rank is its own half's direction.
// DualPipeV: one direction over 2 pp stages in a V: chunk 0 is stage r, chunk 1 stage 2 pp-1-r.
#include <deque>
#include <stdexcept>
#include <utility>

#include "moesim/plan/layout.hpp"
#include "schedule_builders.hpp"

namespace moesim::plan::detail {

std::vector<ScheduleEntry> dualpipe_schedule(const Layout& l, int r, bool v) {
  const int m = l.microbatches;
  const int half_ranks = v ? l.pp : l.pp / 2;
  const int half_rank = v ? r : std::min(r, l.pp - 1 - r);
  const int per_chunk = v ? m : m / 2;               // micro-batches through each chunk
  const int flip = !v && r >= l.pp / 2 ? 1 : 0;      // phase -> chunk on the second half
  const bool middle = half_rank == half_ranks - 1;   // v: the last rank, at the bottom of the V

  std::vector<ScheduleEntry> order;
  order.reserve(6 * per_chunk);
  int forwards[2] = {0, 0}, backwards[2] = {0, 0};
  std::deque<std::pair<int, int>> pending;  // (micro-batch, chunk) of deferred Ws, FIFO
  auto microbatch = [&](int chunk, int k) { return v ? k : chunk * (m / 2) + k; };
  auto forward = [&](int phase) {
    const int c = phase ^ flip;
    order.push_back({Pass::forward, microbatch(c, forwards[c]++), c, false});
  };
  // zb: the weight gradients wait in the WeightGradStore until a W pops them.
  auto backward = [&](int phase, bool zb, bool paired = false) {
    const int c = phase ^ flip;
    const int mb = microbatch(c, backwards[c]++);
    order.push_back({zb ? Pass::input_grad : Pass::backward, mb, c, paired});
    if (zb) pending.emplace_back(mb, c);
  };
  auto weight = [&] {
    order.push_back({Pass::weight_grad, pending.front().first, pending.front().second, false});
    pending.pop_front();
  };
  // _forward_backward_chunk: a forward and a backward of the other phase, overlapped.
  auto forward_backward = [&](int phase0, int phase1) {
    forward(phase0);
    backward(phase1, false, true);
  };

  for (int i = 0; i < (half_ranks - half_rank - 1) * 2; ++i) forward(0);       // 1: nF0
  for (int i = 0; i < half_rank + 1; ++i) forward(0), forward(1);              // 2: nF0F1
  for (int i = 0; i < half_ranks - half_rank - 1; ++i) {                       // 3: nB1W1F1
    backward(1, true);
    weight();
    forward(1);
  }
  const int main_steps = per_chunk - 2 * half_ranks + half_rank + 1;           // 4: nF0B1F1B0
  for (int i = 0; i < main_steps; ++i) {
    if (i == 0 && middle) {
      // "We don't overlap these two chunks to further reduce bubble size."
      forward(0);
      backward(1, false);
    } else {
      forward_backward(0, 1);
    }
    forward_backward(1, 0);
  }
  for (int i = 0; i < half_ranks - half_rank - 1; ++i) {                       // 5: nB1F1B0
    backward(1, false);
    forward_backward(1, 0);
  }
  const int step6 = half_rank + 1;                                             // 6: nB1B0
  bool zb = false;
  for (int i = 0; i < step6; ++i) {
    if (i == step6 / 2 && half_rank % 2 == 1) zb = true;
    backward(1, zb);
    if (i == step6 / 2 && half_rank % 2 == 0) zb = true;
    backward(0, zb);
  }
  for (int i = 0; i < half_ranks - half_rank - 1; ++i) {                       // 7: nWB0
    weight();
    backward(0, true);
  }
  for (int i = 0; i < half_rank + 1; ++i) weight();                            // 8: nW
  if (!pending.empty() || forwards[0] != per_chunk || forwards[1] != per_chunk ||
      backwards[0] != per_chunk || backwards[1] != per_chunk)
    throw std::logic_error("dualpipe schedule: unbalanced passes (layout rules not applied?)");
  return order;
}

}  // namespace moesim::plan::detail
