#pragma once
// Private to the engine: a simulated GPU's state during one step, shared by the actor runner
// (folded fidelity, src/engine/runner.cpp) and the event core (full fidelity, event_core.cpp).
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "moesim/engine/simulate.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::engine {

// A collective as one GPU runs it: its plan and the SMs it holds meanwhile.
struct PlannedCollective {
  // The event core's, made on first use: the member's part, its NIC sends' receivers counted
  // from the member's own place in the group (to_member: an offset, modulo the group's size), so
  // that members whose parts are then the same share one copy (event_core.cpp).
  const platform::FullMemberPart* full_part = nullptr;
  int member_index = -1;  // the GPU's place in the group
  int sms = 0;
  platform::TierLoad load;
  double copies_per_token = 0;   // EP exchanges
  double domains_per_token = 0;
};

// Of the `seconds` a compute task takes, those its kernels keep the GPU busy: its launch-bound
// excess and the optimizer left out, as the breakdown's compute_s leaves them out.
inline double kernel_seconds(const workload::Task& t, double seconds) {
  if (t.activity == workload::Activity::optimizer) return 0;
  return seconds - std::min(std::max(0.0, t.seconds - t.gpu_seconds), seconds);
}

// What identifies a collective's plan on one GPU: (group role, kind, bytes, EP tokens, EP token
// bytes, EP combine kernel, EP probabilities carried).
using PlanKey = std::tuple<int, int, double, double, double, bool, bool>;
// The key of collective `t` whose EP bytes (and tokens) are `ep_load` times the program's: this
// rank's share of the exchange under routed-load imbalance, 1 otherwise.
inline PlanKey plan_key(const workload::Task& t, double ep_load) {
  return {static_cast<int>(t.group), static_cast<int>(t.collective), t.bytes * ep_load, t.ep_tokens * ep_load,
          t.ep_token_bytes, t.ep_combine_kernel, workload::ep_carries_probabilities(t.activity)};
}

// The few distinct collectives a GPU runs (ten or so), each planned once. Past a thousand GPUs
// a GPU's state is out of the caches when its next collective starts, and every cache line a
// lookup reads is a miss: a scan of the plans read four or five. Here a key's hash picks a slot
// in a small table beside the vector's pointer, and the slot the plan, whose key sits in the
// same line as its first fields: two lines in all. With routed-load imbalance every EP exchange
// has a key of its own (thousands per GPU): the table then moves to a vector and grows.
class alignas(64) GpuPlans {
 public:
  // The plan of `key`, or nullptr. A plan added later may move it: good until the next add().
  PlannedCollective* find(const PlanKey& key) {
    const std::uint64_t h = hash(key);
    return large_.empty() ? probe(small_.data(), small_.size(), h, key) : probe(large_.data(), large_.size(), h, key);
  }
  PlannedCollective& add(const PlanKey& key, PlannedCollective plan) {
    entries_.push_back(Entry{key, std::move(plan)});
    const std::size_t n = entries_.size();
    if (large_.empty() && 2 * n <= small_.size()) {
      place(small_.data(), small_.size(), n - 1);
    } else if (4 * n > large_.size()) {  // at most a quarter full, so probes stay short
      large_.assign(std::bit_ceil(8 * n), -1);
      for (std::size_t i = 0; i < n; ++i) place(large_.data(), large_.size(), i);
    } else {
      place(large_.data(), large_.size(), n - 1);
    }
    return entries_.back().plan;
  }

 private:
  struct alignas(64) Entry {
    PlanKey key;
    PlannedCollective plan;
  };
  static std::uint64_t hash(const PlanKey& key) {
    const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
    std::uint64_t h = static_cast<std::uint64_t>(std::get<0>(key)) | static_cast<std::uint64_t>(std::get<1>(key)) << 8 |
                      static_cast<std::uint64_t>(std::get<5>(key)) << 16 | static_cast<std::uint64_t>(std::get<6>(key)) << 17;
    for (const double x : {std::get<2>(key), std::get<3>(key), std::get<4>(key)}) h = (h ^ bits(x)) * 0x9E3779B97F4A7C15ull;
    return h;
  }
  // A table of `count` slots (a power of two, each an entry's index or -1): the hash's top bits.
  static std::size_t first_slot(std::uint64_t h, std::size_t count) {
    return static_cast<std::size_t>(h >> std::countl_zero(static_cast<std::uint64_t>(count - 1)));
  }
  template <class Slot>
  PlannedCollective* probe(const Slot* slots, std::size_t count, std::uint64_t h, const PlanKey& key) {
    for (std::size_t s = first_slot(h, count);; s = (s + 1) & (count - 1)) {
      if (slots[s] < 0) return nullptr;
      if (Entry& e = entries_[static_cast<std::size_t>(slots[s])]; e.key == key) return &e.plan;
    }
  }
  template <class Slot>
  void place(Slot* slots, std::size_t count, std::size_t index) {
    std::size_t s = first_slot(hash(entries_[index].key), count);
    while (slots[s] >= 0) s = (s + 1) & (count - 1);
    slots[s] = static_cast<Slot>(index);
  }

  std::vector<Entry> entries_;
  std::array<std::int8_t, 32> small_ = empty_small();  // up to 16 plans, beside entries_
  std::vector<std::int32_t> large_;                     // beyond
  static constexpr std::array<std::int8_t, 32> empty_small() {
    std::array<std::int8_t, 32> a{};
    a.fill(-1);
    return a;
  }
};

// A simulated GPU: its program, which of its tasks are done, which pipeline messages arrived.
// The event core reads the first cache line at most of a GPU's tasks (a compute task's draws and
// kernel time, a task's wait for a message): past a thousand GPUs this state is cold when the
// GPU's next event comes, and every line read is a miss.
struct Gpu {
  int rank = 0;
  int pp_rank = 0;
  const workload::RankProgram* program = nullptr;
  double kernel_work_s = 0;  // kernel_seconds of its compute tasks, summed as they run
  std::vector<char> arrived;  // the actor runner's (the event core keeps its own, by message)
  bool observed = false;
  std::vector<char> done;  // the actor runner's (the event core reads its streams' progress)
  // Actor runner only. Actors run cooperatively (one at a time, switching only inside simcalls),
  // so the state above needs no lock. A stream whose next task is not ready suspends itself and
  // records the task; a completion resumes it only once that task is ready. Mutex and
  // condition-variable traffic cost several simcalls per task (each a context switch through
  // maestro).
  std::array<simgrid::s4u::ActorPtr, workload::kStreams> actors;
  std::array<int, workload::kStreams> waiting_task{};  // task a suspended stream waits for; -1 if none
  const std::vector<std::uint8_t>* dependents = nullptr;        // per task: streams to wake
  const std::vector<std::uint8_t>* message_waiters = nullptr;   // per message: streams to wake
  std::array<const platform::Group*, workload::kGroupRoles> groups{};  // by GroupRole (the Simulation's)
  std::vector<int> pp_peers;              // global rank of each pipeline rank of its pipeline
  std::vector<TaskInterval> intervals;
  std::array<double, workload::kStreams> task_start_s{};  // observed: each stream's running task's start
  GpuPlans plans;  // the collectives it runs, each planned once
  Traffic traffic;

  // Whether `t` is ready once `running` (the task before it on its stream; -1: none) is done.
  bool ready_after(const workload::Task& t, int running) const {
    for (int d : t.deps)
      if (!done[static_cast<std::size_t>(d)] && d != running) return false;
    return t.wait_message.id < 0 || arrived[static_cast<std::size_t>(t.wait_message.id)];
  }
  bool ready(const workload::Task& t) const { return ready_after(t, -1); }
};
static_assert(offsetof(Gpu, observed) < 64, "the event core's fields of a GPU in its first cache line");

// The ids of a program's tasks on each stream, in program order.
inline std::array<std::vector<int>, workload::kStreams> tasks_by_stream(const workload::RankProgram& program) {
  std::array<std::vector<int>, workload::kStreams> ids;
  for (std::size_t t = 0; t < program.tasks.size(); ++t)
    ids[static_cast<int>(program.tasks[t].stream)].push_back(static_cast<int>(t));
  return ids;
}

// A pipeline message's bytes, on the tier it crosses.
inline void count_message(Gpu& g, const platform::Topology& topo, int peer, double bytes) {
  (topo.domain_of(peer) == topo.domain_of(g.rank) ? g.traffic.other_nvlink_bytes : g.traffic.other_nic_bytes) += bytes;
}

inline void count_traffic(Gpu& g, const workload::Task& t, const PlannedCollective& p) {
  if (t.group == workload::GroupRole::ep) {
    g.traffic.ep_nvlink_bytes += p.load.nvlink_bytes;
    g.traffic.ep_nic_bytes += p.load.nic_bytes;
    g.traffic.ep_copies_per_token = p.copies_per_token;
    g.traffic.ep_domains_per_token = p.domains_per_token;
  } else {
    g.traffic.other_nvlink_bytes += p.load.nvlink_bytes;
    g.traffic.other_nic_bytes += p.load.nic_bytes;
  }
}

// What the event core asks of the step it runs.
class StepHooks {
 public:
  // The plan of collective `t` on g's own group.
  virtual PlannedCollective& planned(Gpu& g, const workload::Task& t, const platform::Group& group) = 0;
  // Whether a collective's plan on a GPU may be kept for the later runs of the same collective
  // (Options::reuse_plans): every rank's EP exchanges move the program's bytes (no routed-load
  // imbalance), so the plan is the same each time its program runs it.
  virtual bool plans_reusable() const = 0;
  // Seconds compute task `id` takes on g (its draws), counted into g.kernel_work_s.
  virtual double start_compute(Gpu& g, int id) = 0;
  virtual void task_finished() = 0;  // one more task done: counts it, reports progress

 protected:
  ~StepHooks() = default;
};

}  // namespace moesim::engine
