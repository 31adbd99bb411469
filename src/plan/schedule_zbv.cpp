// ZB-V: the greedy V-schedule builder of sail-sg's zero-bubble runtime (scheduler/zbv.py,
// PipelineGraph.try_v_schedule and create_schedule), re-implemented. It places F, B and W passes
// stage by stage while timing them, filling idle time with pending Ws under a memory limit.
//
// The runtime feeds it profiled pass times; moesim builds the schedule before any cost is known
// (the plan stage), so it uses the assumption of the paper's handcrafted ZB-V: T_F = T_B = T_W,
// free messages. Memory per pass is the runtime's approximation per layer and token
// (f = 34h + 5as, w = -32h, b = -f - w) without the 5as attention-score term, which flash
// attention does not save: F adds 34, B frees 2, W frees 32; the limit is 2 pp forwards, the
// activations of pp micro-batches as in 1F1B.
//
// Inside the builder, B and W "chunk 0" is the backward of model chunk 1 (the V's second half,
// whose backward runs first) and "chunk 1" that of model chunk 0; the reference flips them back
// when it emits the schedule, and so does zb_v_schedule.
#include <algorithm>
#include <deque>
#include <stdexcept>
#include <vector>

#include "moesim/plan/layout.hpp"
#include "schedule_builders.hpp"

namespace moesim::plan::detail {

namespace {

constexpr int kF = 0, kB = 1, kW = 2;
constexpr long kCost[3] = {1, 1, 1};       // T_F = T_B = T_W
constexpr long kComm = 0;                  // free messages
constexpr long kMemory[3] = {34, -2, -32};

struct Placed {
  int cat = 0, chunk = 0, microbatch = 0;
};

struct Attempt {
  std::vector<std::vector<Placed>> order;  // per stage
  long max_bubble = 0;
  std::vector<long> stage_bubble;
};

class VBuilder {
 public:
  VBuilder(int stages, int microbatches)
      : n_(stages), m_(microbatches), max_memory_(kMemory[kF] * 2 * stages) {}

  Attempt run(bool fill_f, bool fill_b, const std::vector<long>& approved) {
    reset(approved);
    warm_up();
    for (int round = 0; round < 2 * m_; ++round) {
      place_backwards(fill_b);
      place_forwards(fill_f);
    }
    for (int i = 0; i < n_; ++i)
      while (!pending_w_[i].empty()) put_w(i);
    Attempt a;
    a.order = std::move(order_);
    a.max_bubble = max_stage_bubble(-1);
    a.stage_bubble = stage_bubble_;
    return a;
  }

 private:
  long id(int cat, int chunk, int stage, int micro) const {
    return ((static_cast<long>(cat) * 2 + chunk) * n_ + stage) * m_ + micro;
  }
  // The reference indexes its end times with -1 when a pass has no predecessor on another stage,
  // which Python reads as the last node's end time; kept, since it steers its decisions.
  long end_of(long node) const { return node >= 0 ? end_[node] : end_.back(); }
  int& count(int stage, int cat, int chunk) { return count_[stage][cat * 2 + chunk]; }

  void reset(const std::vector<long>& approved) {
    count_.assign(n_, std::vector<int>(6, 0));
    end_.assign(static_cast<size_t>(6) * n_ * m_, -1);
    cur_.assign(n_, 0);
    memory_.assign(n_, 0);
    stage_bubble_.assign(n_, 0);
    pending_w_.assign(n_, {});
    order_.assign(n_, {});
    approved_ = approved;
    max_approved_ = approved.empty() ? -1 : *std::max_element(approved.begin(), approved.end());
  }

  long max_stage_bubble(int stage) const {
    long b = 0;
    for (long x : stage_bubble_) b = std::max(b, x);
    if (stage >= 0 && !approved_.empty()) b = std::max(b, max_approved_ - approved_[stage]);
    return b;
  }

  void put(int cat, int chunk, int stage) {
    const long no_bubble = cur_[stage] + kCost[cat];
    long t = no_bubble;
    int& cnt = count(stage, cat, chunk);
    if (cnt >= m_ || memory_[stage] + kMemory[cat] > max_memory_)
      throw std::logic_error("zb-v builder: pass count or memory limit exceeded");
    if (cat < kW) {
      // Chunk 1 flows from the last stage back to the first (forward) and its B from the first
      // stage on; chunk 0 the other way.
      if (chunk == 1 && stage < n_ - 1) t = std::max(t, end_[id(cat, 1, stage + 1, cnt)] + kComm + kCost[cat]);
      if (chunk == 0 && stage > 0) t = std::max(t, end_[id(cat, 0, stage - 1, cnt)] + kComm + kCost[cat]);
    }
    if (count(stage, kF, 0) > 0) stage_bubble_[stage] += t - no_bubble;
    end_[id(cat, chunk, stage, cnt)] = t;
    cur_[stage] = t;
    memory_[stage] += kMemory[cat];
    order_[stage].push_back({cat, chunk, cnt});
    if (cat == kB) pending_w_[stage].push_back(chunk);
    ++cnt;
  }

  void put_w(int stage) {
    const int chunk = pending_w_[stage].front();
    pending_w_[stage].pop_front();
    put(kW, chunk, stage);
  }

  void warm_up() {
    for (int i = 0; i < n_; ++i) put(kF, 0, i);
    for (int i = n_ - 1; i >= 0; --i) {
      if (i == n_ - 1) {
        put(kF, 1, i);
        continue;
      }
      const long arrival = end_[id(kF, 1, i + 1, 0)] + kComm;
      while (memory_[i] + kMemory[kF] * (2 + i * 2) <= max_memory_ && cur_[i] + kCost[kF] <= arrival &&
             count(i, kF, 0) < m_)
        for (int j = 0; j <= i; ++j) put(kF, 0, j);
      put(kF, 1, i);
    }
    int chunk = 0;
    for (int i = 1; i < n_; ++i) {
      auto behind = [&] {
        const int mine = count(i, kF, 0) + count(i, kF, 1), before = count(i - 1, kF, 0) + count(i - 1, kF, 1);
        return mine < before || (count(i, kF, 1) <= count(i - 1, kF, 1) && count(i - 1, kF, 1) < m_);
      };
      while (behind()) {
        for (int j = n_ - 1; j >= i; --j)
          if (count(j, kF, chunk) < m_) put(kF, chunk, j);
        chunk = 1 - chunk;
      }
    }
  }

  // Pending Ws fill the wait for `upstream`, and one more runs when the wait would exceed the
  // bubble this stage may still take.
  void fill_with_w(int stage, long upstream, bool allowed) {
    while (!pending_w_[stage].empty() && upstream >= 0 && end_[upstream] + kComm >= cur_[stage] + kCost[kW])
      put_w(stage);
    if (!pending_w_[stage].empty() &&
        end_of(upstream) + kComm - cur_[stage] > max_stage_bubble(stage) - stage_bubble_[stage] && allowed)
      put_w(stage);
  }

  void place_backwards(bool fill_b) {
    for (int i = 0; i < n_; ++i)
      while (memory_[i] + kMemory[kB] > max_memory_) put_w(i);
    std::vector<int> b0, b1;
    for (int i = 0; i < n_; ++i) {
      if (count(i, kB, 1) >= count(i, kB, 0)) b0.push_back(i);
      else if (i == n_ - 1) b1.push_back(i);
      else if (end_[id(kB, 1, i + 1, count(i, kB, 1))] >= 0 || count(i, kB, 0) >= m_) b1.push_back(i);
      else b0.push_back(i);
    }
    std::vector<std::pair<int, int>> order;
    for (auto it = b1.rbegin(); it != b1.rend(); ++it) order.emplace_back(*it, 1);
    for (int i : b0) order.emplace_back(i, 0);
    for (const auto& [i, chunk] : order) {
      long upstream = -1;
      if (chunk == 1 && i < n_ - 1) upstream = id(kB, 1, i + 1, count(i, kB, 1));
      if (chunk == 0 && i > 0) upstream = id(kB, 0, i - 1, count(i, kB, 0));
      fill_with_w(i, upstream, chunk == 1 || fill_b);
      put(kB, chunk, i);
    }
  }

  void place_forwards(bool fill_f) {
    for (int i = 0; i < n_; ++i) {
      if (count(i, kF, 1) >= m_) continue;
      int item = -1;
      if (count(i, kF, 1) >= count(i, kF, 0)) item = 0;
      else if (i == n_ - 1) item = 1;
      else if (end_[id(kF, 1, i + 1, count(i, kF, 1))] >= 0) item = 1;
      else if (count(i, kF, 0) < m_ && (i == 0 || end_[id(kF, 0, i - 1, count(i, kF, 0))] >= 0)) item = 0;
      if (item < 0) continue;
      while (memory_[i] + kMemory[kF] > max_memory_) {
        if (pending_w_[i].empty()) throw std::logic_error("zb-v builder: memory limit with no W to run");
        put_w(i);
      }
      long upstream = -1;
      if (item == 0 && i > 0) upstream = id(kF, 0, i - 1, count(i, kF, 0));
      if (item == 1 && i < n_ - 1) upstream = id(kF, 1, i + 1, count(i, kF, 1));
      fill_with_w(i, upstream, fill_f);
      put(kF, item, i);
    }
  }

  int n_, m_;
  long max_memory_;
  std::vector<std::vector<int>> count_;
  std::vector<long> end_, cur_, memory_, stage_bubble_;
  std::vector<std::deque<int>> pending_w_;
  std::vector<std::vector<Placed>> order_;
  std::vector<long> approved_;
  long max_approved_ = -1;
};

// try_v_schedule: retried with the bubbles it found as the approved ones while that helps.
Attempt try_v(VBuilder& b, bool fill_f, bool fill_b, const std::vector<long>& approved) {
  Attempt a = b.run(fill_f, fill_b, approved);
  const long max_approved = approved.empty() ? -1 : *std::max_element(approved.begin(), approved.end());
  if (max_approved < 0 || a.max_bubble < max_approved) {
    Attempt again = try_v(b, fill_f, fill_b, a.stage_bubble);
    if (again.max_bubble < a.max_bubble) return again;
  }
  return a;
}

}  // namespace

std::vector<ScheduleEntry> zb_v_schedule(const Layout& l, int pp_rank) {
  VBuilder builder(l.pp, l.microbatches);
  // create_schedule: the best of the four fill choices, the first one on a tie.
  Attempt best;
  bool have = false;
  for (bool fill_b : {true, false})
    for (bool fill_f : {true, false}) {
      Attempt a = try_v(builder, fill_f, fill_b, {});
      if (!have || a.max_bubble < best.max_bubble) best = std::move(a), have = true;
    }
  std::vector<ScheduleEntry> out;
  for (const Placed& p : best.order[pp_rank]) {
    const Pass pass = p.cat == kF ? Pass::forward : p.cat == kB ? Pass::input_grad : Pass::weight_grad;
    out.push_back({pass, p.microbatch, p.cat == kF ? p.chunk : 1 - p.chunk, false});
  }
  return out;
}

}  // namespace moesim::plan::detail
