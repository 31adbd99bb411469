#pragma once
// Private to the engine: a simulated GPU's state during one step, shared by the actor runner
// (folded fidelity, src/engine/runner.cpp) and the event core (full fidelity, event_core.cpp).
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <tuple>
#include <vector>

#include "moesim/engine/simulate.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::engine {

// A collective as one GPU runs it: its plan and the SMs it holds meanwhile.
struct PlannedCollective {
  platform::TierLoad load;
  int sms = 0;
  double copies_per_token = 0;   // EP exchanges
  double domains_per_token = 0;
  std::optional<platform::FullMemberPart> full_part;  // the event core's, made on first use
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

// A simulated GPU: its program, which of its tasks are done, which pipeline messages arrived.
struct Gpu {
  int rank = 0;
  int pp_rank = 0;
  const workload::RankProgram* program = nullptr;
  std::vector<char> done;  // the actor runner's (the event core reads its streams' progress)
  std::vector<char> arrived;
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
  bool observed = false;
  double kernel_work_s = 0;  // kernel_seconds of its compute tasks, summed as they run
  std::vector<TaskInterval> intervals;
  // The few distinct collectives it runs, planned once: their keys side by side (a scan of a few
  // cache lines, where a map's nodes are a chain of misses once the GPUs' state outgrows the
  // caches), their plans where a running collective's pointer into one stays valid.
  std::vector<PlanKey> plan_keys;
  std::deque<PlannedCollective> plans;
  Traffic traffic;

  // Whether `t` is ready once `running` (the task before it on its stream; -1: none) is done.
  bool ready_after(const workload::Task& t, int running) const {
    for (int d : t.deps)
      if (!done[static_cast<std::size_t>(d)] && d != running) return false;
    return t.wait_message.id < 0 || arrived[static_cast<std::size_t>(t.wait_message.id)];
  }
  bool ready(const workload::Task& t) const { return ready_after(t, -1); }
};

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
  // Seconds compute task `id` takes on g (its draws), counted into g.kernel_work_s.
  virtual double start_compute(Gpu& g, int id) = 0;
  virtual void task_finished() = 0;  // one more task done: counts it, reports progress

 protected:
  ~StepHooks() = default;
};

}  // namespace moesim::engine
