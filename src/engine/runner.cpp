// One step, simulated: the folded fidelity as actors per (GPU, stream) executing step programs;
// the full one through the event core (event_core.hpp).
#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "breakdown.hpp"
#include "event_core.hpp"
#include "gpu_state.hpp"
#include "moesim/config/error.hpp"
#include "moesim/engine/simulate.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/isolated_run.hpp"
#include "moesim/platform/nccl.hpp"
#include "moesim/workload/variation.hpp"

namespace sg4 = simgrid::s4u;

namespace moesim::engine {

using workload::Stream;
using workload::Task;
using workload::TaskKind;

namespace {

class Simulation final : StepHooks {
 public:
  Simulation(const Scenario& s, const plan::Layout& l, const workload::StepProgram& prog,
             const Options& o)
      : s_(s), l_(l), prog_(prog), opt_(o) {}

  SimResult run() {
    auto engine = platform::make_engine();
    platform::Topology topo = platform::scenario_topology(s_);
    stage_nic_speed_.assign(static_cast<std::size_t>(l_.pp), 1.0);
    if (topo.any_slow_nic())
      for (int r = 0; r < l_.world; ++r) {
        double& speed = stage_nic_speed_[static_cast<std::size_t>(l_.coord(r).pp)];
        speed = std::min(speed, topo.nic_speed_of(r));
      }
    std::vector<int> simulated;
    if (opt_.fidelity == platform::Fidelity::folded) {
      for (int r = 0; r < l_.pp; ++r) simulated.push_back(l_.dense_rank(0, 0, 0, r));
    } else {
      for (int r = 0; r < l_.world; ++r) simulated.push_back(r);
    }
    platform_ = platform::Platform::build(topo, opt_.fidelity, simulated);
    ep_request_ = platform::ep_exchange_request(s_.recipe, s_.stack, s_.model);
    const workload::VariationMode mode = opt_.fidelity == platform::Fidelity::full ? workload::VariationMode::full
                                         : opt_.sampled ? workload::VariationMode::folded_sampled
                                                        : workload::VariationMode::folded;
    variation_ = std::make_unique<workload::Variation>(s_, l_, prog_, mode);
    index_of_.assign(l_.world, -1);
    wake_lists();
    gpus_.resize(simulated.size());
    GroupOfRank group_of_rank;
    for (auto& of_rank : group_of_rank) of_rank.assign(static_cast<std::size_t>(l_.world), nullptr);
    for (size_t i = 0; i < simulated.size(); ++i) {
      Gpu& g = gpus_[i];
      g.rank = simulated[i];
      g.pp_rank = l_.coord(g.rank).pp;
      g.program = &prog_.stages[g.pp_rank];
      // The event core reads its streams' progress instead, and keeps the messages' arrivals.
      if (opt_.fidelity == platform::Fidelity::folded) {
        g.done.assign(g.program->tasks.size(), 0);
        g.arrived.assign(prog_.message_count, 0);
      }
      g.waiting_task.fill(-1);
      g.dependents = &dependents_[g.pp_rank];
      g.message_waiters = &message_waiters_[g.pp_rank];
      using workload::GroupRole;
      set_group(g, GroupRole::tp, &plan::Layout::tp_group, group_of_rank);
      set_group(g, GroupRole::ep, &plan::Layout::ep_group, group_of_rank);
      set_group(g, GroupRole::dp, &plan::Layout::dp_group, group_of_rank);
      set_group(g, GroupRole::edp, &plan::Layout::edp_group, group_of_rank);
      set_group(g, GroupRole::dp_shard, &plan::Layout::dp_shard_group, group_of_rank);
      set_group(g, GroupRole::dp_replicate, &plan::Layout::dp_replicate_group, group_of_rank);
      set_group(g, GroupRole::edp_shard, &plan::Layout::edp_shard_group, group_of_rank);
      set_group(g, GroupRole::edp_replicate, &plan::Layout::edp_replicate_group, group_of_rank);
      g.pp_peers = l_.pp_group(g.rank);
      g.observed = g.rank == l_.dense_rank(0, 0, 0, g.pp_rank);
      index_of_[g.rank] = static_cast<int>(i);
    }
    if (opt_.fidelity == platform::Fidelity::full) {
      sg4::Actor::create("event-core", platform_->host(gpus_.front().rank), [this]() {
        try {
          run_event_core(*platform_, gpus_, index_of_, *this);
        } catch (const std::exception&) {
          failure_ = std::current_exception();
        }
      });
    } else {
      create_stream_actors();
    }
    for (const Gpu& g : gpus_) tasks_total_ += static_cast<long long>(g.program->tasks.size());
    last_report_ = std::chrono::steady_clock::now();
    engine->run();
    if (failure_) std::rethrow_exception(failure_);
    if (opt_.on_progress) opt_.on_progress(SimProgress{activities_, tasks_total_, sg4::Engine::get_clock()});

    SimResult result;
    result.step_time_s = sg4::Engine::get_clock();
    result.activities = activities_;
    result.simulated_gpus = static_cast<int>(gpus_.size());
    for (Gpu& g : gpus_) {
      if (!g.observed) continue;
      StageResult st;
      st.pp_rank = g.pp_rank;
      st.observed_rank = g.rank;
      st.replicas = l_.world / l_.pp;
      for (const TaskInterval& iv : g.intervals) st.finish_s = std::max(st.finish_s, iv.end_s);
      st.breakdown = attribute_time(*g.program, g.intervals, result.step_time_s);
      st.mean_busy_share = mean_busy_share(g);
      st.traffic = g.traffic;
      if (opt_.record_timeline) st.timeline = std::move(g.intervals);
      result.stages.push_back(std::move(st));
    }
    std::sort(result.stages.begin(), result.stages.end(),
              [](const StageResult& a, const StageResult& b) { return a.pp_rank < b.pp_rank; });
    return result;
  }

 private:
  // The folded fidelity's actors: one per stream of each representative.
  void create_stream_actors() {
    for (Gpu& g : gpus_) {
      std::array<std::vector<int>, workload::kStreams> per_stream = tasks_by_stream(*g.program);
      for (int st = 0; st < workload::kStreams; ++st) {
        if (per_stream[st].empty()) continue;
        g.actors[st] = sg4::Actor::create(fmt::format("gpu{}-s{}", g.rank, st), platform_->host(g.rank),
                                          [this, &g, ids = std::move(per_stream[st]), st]() { guarded(g, ids, st); });
      }
    }
  }

  // StepHooks, for the event core.
  PlannedCollective& planned(Gpu& g, const Task& t, const platform::Group& group) override {
    return plan_of(g, t, group);
  }
  bool plans_reusable() const override { return opt_.reuse_plans && variation_->expert_load().balanced; }
  double start_compute(Gpu& g, int id) override {
    const Task& t = g.program->tasks[static_cast<std::size_t>(id)];
    const double seconds = variation_->compute_seconds(g.rank, g.pp_rank, id, t);
    g.kernel_work_s += kernel_seconds(t, seconds);
    return seconds;
  }
  void task_finished() override {
    ++activities_;
    report_progress();
  }

  // Every member of a group points at one copy of it: a data-parallel group spans half the GPUs
  // or more, so a copy per member would make memory grow as the square of the GPU count, and so
  // would listing its ranks for each member (0.6 % of the full fidelity's time at 8,192 GPUs,
  // 6.7 times its 4,096-GPU samples). A layout's groups of one kind partition its ranks, each
  // member's list the same (tests/unit/test_plan_layout.cpp), so the first member met lists them
  // and every member found in the list points at the copy.
  using GroupOfRank = std::array<std::vector<const platform::Group*>, workload::kGroupRoles>;
  void set_group(Gpu& g, workload::GroupRole role, std::vector<int> (plan::Layout::*ranks_of)(int) const,
                 GroupOfRank& group_of_rank) {
    std::vector<const platform::Group*>& of_rank = group_of_rank[static_cast<std::size_t>(role)];
    const platform::Group*& group = of_rank[static_cast<std::size_t>(g.rank)];
    if (!group) {
      const platform::Group& made = groups_.emplace_back(platform::Group{(l_.*ranks_of)(g.rank)});
      for (int member : made.ranks) of_rank[static_cast<std::size_t>(member)] = &made;
      if (!group) throw std::logic_error("rank " + std::to_string(g.rank) + " is missing from its own group");
    }
    g.groups[static_cast<int>(role)] = group;
  }

  // Which streams hold tasks that depend on each task, and on each pipeline message.
  void wake_lists() {
    dependents_.resize(prog_.stages.size());
    message_waiters_.resize(prog_.stages.size());
    for (size_t p = 0; p < prog_.stages.size(); ++p) {
      const auto& tasks = prog_.stages[p].tasks;
      dependents_[p].assign(tasks.size(), 0);
      message_waiters_[p].assign(prog_.message_count, 0);
      for (const Task& t : tasks) {
        const auto bit = static_cast<std::uint8_t>(1u << static_cast<int>(t.stream));
        for (int d : t.deps)
          if (tasks[d].stream != t.stream) dependents_[p][d] |= bit;
        if (t.wait_message.id >= 0) message_waiters_[p][t.wait_message.id] |= bit;
      }
    }
  }

  // The kernel time of an average GPU among those observed GPU `g` stands for, over g's own. Full
  // fidelity: the mean of its stage's GPUs, each its own draws. Folded: the mean GPU's expected
  // time, where g takes the expected slowest (charging every GPU g's overstated the energy).
  double mean_busy_share(const Gpu& g) const {
    if (g.kernel_work_s <= 0) return 1;
    double mean_work = 0;
    if (opt_.fidelity == platform::Fidelity::full) {
      int members = 0;
      for (const Gpu& other : gpus_)
        if (other.pp_rank == g.pp_rank) {
          mean_work += other.kernel_work_s;
          ++members;
        }
      mean_work /= members;
    } else {
      for (const Task& t : g.program->tasks)
        if (t.kind == TaskKind::compute) mean_work += kernel_seconds(t, variation_->mean_compute_seconds(t));
    }
    return mean_work / g.kernel_work_s;
  }

  // Looks at the wall clock every 4,096 tasks only: cheap beside a task's own cost.
  void report_progress() {
    if (!opt_.on_progress || (activities_ & 4095) != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report_).count() < opt_.progress_interval_s) return;
    last_report_ = now;
    opt_.on_progress(SimProgress{activities_, tasks_total_, sg4::Engine::get_clock()});
  }

  // Resumes each of `streams` that is suspended on a task which is now ready.
  void wake(Gpu& g, std::uint8_t streams) const {
    for (int s = 0; s < workload::kStreams; ++s) {
      const int waiting = g.waiting_task[s];
      if (!(streams & (1u << s)) || waiting < 0 || !g.ready(g.program->tasks[waiting])) continue;
      g.waiting_task[s] = -1;
      g.actors[s]->resume();
    }
  }

  // No exception may leave an actor: SimGrid would print "Uncaught exception" and abort the
  // whole process. The first one is kept and every other actor killed (the step cannot finish
  // without this one); run() rethrows it once the engine returns. SimGrid's own kill exception is
  // no std::exception and passes through.
  void guarded(Gpu& g, const std::vector<int>& ids, int stream_index) {
    try {
      stream(g, ids, stream_index);
    } catch (const std::exception&) {
      if (!failure_) failure_ = std::current_exception();
      sg4::Actor::kill_all();
    }
  }

  void stream(Gpu& g, const std::vector<int>& ids, int stream_index) {
    // Collectives of one stream run one after another and every member of a group issues them
    // in the same order, so one mailbox tag per (stream, group) matches them in FIFO order.
    std::array<std::string, workload::kGroupRoles> tags;
    for (int role = 0; role < workload::kGroupRoles; ++role) tags[role] = fmt::format("s{}g{}", stream_index, role);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const int id = ids[k];
      const Task& t = g.program->tasks[id];
      while (!g.ready(t)) {
        g.waiting_task[stream_index] = id;
        sg4::this_actor::suspend();
      }
      if (!g.observed && t.kind == TaskKind::compute) {
        k = run_compute_chain(g, ids, k);
        continue;
      }
      const double start = g.observed ? sg4::Engine::get_clock() : 0;  // the clock is a lookup
      execute(g, id, t, tags[static_cast<int>(t.group)]);
      ++activities_;
      report_progress();
      if (g.observed) g.intervals.push_back({id, start, sg4::Engine::get_clock()});
      g.done[id] = 1;
      wake(g, (*g.dependents)[id]);
    }
  }

  // Runs the ready compute task ids[first] and the compute tasks after it on its stream that
  // would start the moment their predecessor ends, as one execution: each has all its other
  // dependencies done already and no task of another stream waits for its predecessor. The
  // chain ends when each of its tasks would have ended (one stream runs one task at a time, at
  // the rate the GPU's other activities leave), so only unobserved GPUs, whose task intervals
  // nobody records, take this path: it saves SimGrid an activity per task. Returns the index of
  // the chain's last task.
  std::size_t run_compute_chain(Gpu& g, const std::vector<int>& ids, std::size_t first) {
    const auto& tasks = g.program->tasks;
    double seconds = variation_->compute_seconds(g.rank, g.pp_rank, ids[first], tasks[ids[first]]);
    g.kernel_work_s += kernel_seconds(tasks[ids[first]], seconds);
    std::size_t last = first;
    while (last + 1 < ids.size() && (*g.dependents)[ids[last]] == 0) {
      const int next = ids[last + 1];
      const Task& n = tasks[next];
      if (n.kind != TaskKind::compute || !g.ready_after(n, ids[last])) break;
      const double next_seconds = variation_->compute_seconds(g.rank, g.pp_rank, next, n);
      seconds += next_seconds;
      g.kernel_work_s += kernel_seconds(n, next_seconds);
      ++last;
    }
    if (seconds > 0) sg4::this_actor::execute(seconds * platform_->host(g.rank)->get_speed());
    for (std::size_t k = first; k <= last; ++k) {
      ++activities_;
      g.done[ids[k]] = 1;
    }
    report_progress();
    wake(g, (*g.dependents)[ids[last]]);
    return last;
  }

  void execute(Gpu& g, int id, const Task& t, const std::string& tag) {
    sg4::Host* host = platform_->host(g.rank);
    switch (t.kind) {
      case TaskKind::compute: {
        const double seconds = variation_->compute_seconds(g.rank, g.pp_rank, id, t);
        g.kernel_work_s += kernel_seconds(t, seconds);
        if (seconds > 0) sg4::this_actor::execute(seconds * host->get_speed());
        return;
      }
      case TaskKind::collective: {
        const platform::Group& group = *g.groups[static_cast<int>(t.group)];
        if (group.ranks.size() <= 1) return;
        const PlannedCollective& plan = plan_of(g, t, group);
        if (g.observed) count_traffic(g, t, plan);
        // Its own copy: the GPU's other streams may plan meanwhile, which may move `plan`.
        const platform::TierLoad load = plan.load;
        // A collective's kernels (NCCL's channels, a dispatcher's SMs) take their share of the
        // GPU while it communicates, so compute beside it slows by that fraction.
        sg4::ExecPtr sms;
        const int sm_count = platform_->topology().gpu_sm_count;
        if (plan.sms > 0 && sm_count > 0)
          sms = sg4::this_actor::exec_init(1e30)->set_bound(std::min(1.0, static_cast<double>(plan.sms) / sm_count) *
                                                           host->get_speed());
        if (sms) sms->start();
        platform::run_load(*platform_, group, load, g.rank, tag);
        if (sms) sms->cancel();
        return;
      }
      case TaskKind::host_copy:
        // The copy engines move it over the GPU's own host link, beside the SMs.
        if (t.seconds > 0) sg4::this_actor::sleep_for(t.seconds);
        return;
      case TaskKind::pp_send: {
        const int peer = g.pp_peers[t.peer_pp_rank];
        if (g.observed) count_message(g, platform_->topology(), peer, t.bytes);
        if (t.bytes > 0) send_to_peer(g.rank, g.pp_rank, peer, t.peer_pp_rank, t.bytes);
        Gpu& to = gpus_[index_of_[peer]];
        to.arrived[t.message.id] = 1;
        wake(to, (*to.message_waiters)[t.message.id]);
        return;
      }
    }
  }

  // A pipeline message between representatives (the full fidelity's are the event core's).
  // The representatives' NICs are never degraded ones (the scenario's fabric_faults), but the
  // representatives stand for every pipeline and wait for the slowest at the gradient reduction,
  // so a message between stages with a degraded NIC takes as long as that NIC needs: its bytes
  // over the speed, at the representative's rate (SimGrid 3.32 ignores set_rate on a host-to-host
  // comm, platform.hpp), holding the representative's NIC as long.
  void send_to_peer(int rank, int pp_rank, int peer, int peer_pp_rank, double bytes) const {
    const platform::Topology& topo = platform_->topology();
    const auto size = static_cast<uint64_t>(bytes);
    const double speed = topo.domain_of(peer) == topo.domain_of(rank)
                             ? 1.0
                             : std::min(stage_nic_speed_[static_cast<std::size_t>(pp_rank)],
                                        stage_nic_speed_[static_cast<std::size_t>(peer_pp_rank)]);
    sg4::Comm::sendto(platform_->host(rank), platform_->host(peer),
                      speed < 1 ? static_cast<uint64_t>(std::llround(static_cast<double>(size) / speed)) : size);
  }

  // The plan of a collective task on this GPU's own group: NCCL's algorithm, or the recipe's EP
  // dispatcher for an EP exchange. Planned once per distinct collective.
  PlannedCollective& plan_of(Gpu& g, const Task& t, const platform::Group& group) {
    const bool ep = t.group == workload::GroupRole::ep && t.ep_token_bytes > 0;
    // Routed-load imbalance: this rank's share of the EP tokens (or bytes) of this exchange.
    const double load = variation_->ep_load_factor(g.rank, t);
    const double bytes = t.bytes * load, tokens = t.ep_tokens * load;
    const PlanKey key = plan_key(t, load);
    if (PlannedCollective* known = g.plans.find(key)) return *known;
    PlannedCollective p;
    const platform::Topology& topo = platform_->topology();
    if (ep) {
      const platform::EpExchangeRequest r = platform::one_exchange(
          ep_request_, t.ep_combine_kernel ? platform::EpKernel::combine : platform::EpKernel::dispatch, tokens,
          t.ep_token_bytes, workload::ep_carries_probabilities(t.activity));
      // Folded: the representative stands for every member, so it runs the busiest one's plan
      // where the group's NVLink domains are unequal (the same as its own where they are equal).
      const platform::EpExchangePlan e = opt_.fidelity == platform::Fidelity::folded
                                             ? platform::plan_ep_exchange_folded(topo, group, r, g.rank)
                                             : platform::plan_ep_exchange(topo, group, r, g.rank);
      p.load = e.load;
      p.sms = r.dispatcher == platform::EpDispatcher::nccl_alltoall ? e.channels : r.sms;
      p.copies_per_token = e.copies_per_token;
      p.domains_per_token = e.domains_per_token;
    } else {
      const platform::CollectivePlan c = platform::plan_collective(*platform_, t.collective, group, bytes, g.rank);
      p.load = c.load;
      p.sms = c.channels;
    }
    return g.plans.add(key, std::move(p));
  }

  const Scenario& s_;
  const plan::Layout& l_;
  const workload::StepProgram& prog_;
  Options opt_;
  platform::EpExchangeRequest ep_request_;
  std::unique_ptr<platform::Platform> platform_;
  std::unique_ptr<workload::Variation> variation_;
  std::exception_ptr failure_;  // the first exception an actor raised
  std::vector<Gpu> gpus_;
  std::deque<platform::Group> groups_;  // one of each group, shared by its members (a deque: they stay put)
  std::vector<int> index_of_;
  std::vector<double> stage_nic_speed_;  // per pipeline rank: its slowest NIC over the rated one
  std::vector<std::vector<std::uint8_t>> dependents_, message_waiters_;
  long long activities_ = 0;
  long long tasks_total_ = 0;
  std::chrono::steady_clock::time_point last_report_;
};

}  // namespace

SimResult simulate(const Scenario& s, const plan::Layout& l, const workload::StepProgram& program,
                   const Options& options) {
  // A logic error inside the simulation (a group the platform cannot plan) is the layout's: it
  // crosses to the parent as a marked message and becomes an explained error (exit 3), not a
  // crashed child.
  static const std::string kCannotPlan = "moesim-cannot-plan\n";
  const std::string wire = platform::run_isolated([&] {
    try {
      Simulation sim(s, l, program, options);
      return to_wire(sim.run());
    } catch (const std::logic_error& e) {
      return kCannotPlan + e.what();
    }
  });
  if (wire.rfind(kCannotPlan, 0) == 0)
    throw InfeasibleError("infeasible layout: the simulator cannot plan this layout's communication (" +
                          wire.substr(kCannotPlan.size()) +
                          "); change layout.ep, layout.tp or layout.gpus_per_domain so that each group's ranks "
                          "divide its work (moesim plan shows the groups)");
  return from_wire(wire);
}

}  // namespace moesim::engine
