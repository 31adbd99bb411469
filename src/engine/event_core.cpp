#include "event_core.hpp"

#include <simgrid/s4u.hpp>

#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "moesim/engine/event_queue.hpp"
#include "moesim/engine/flat_map.hpp"
#include "gpu_run.hpp"
#include "member_parts.hpp"
#include "nic_transfers.hpp"

namespace moesim::engine {

namespace {

using namespace event_core;
namespace sg4 = simgrid::s4u;
using platform::FullRoute;
using platform::FullTransfer;
using workload::Task;
using workload::TaskKind;

constexpr double kNever = std::numeric_limits<double>::infinity();

// Owners of a GPU's SharedRate jobs: the stream and what the job is (a tier's index, or below).
constexpr int kOwnerCompute = 250;  // a compute task
constexpr int kOwnerSmHold = 251;   // a collective's SMs, held until it ends
constexpr int kOwnerPipeline = 252; // a pipeline message over the NVLink port
std::uint32_t owner(int stream, int what) { return static_cast<std::uint32_t>(stream * 256 + what); }

// A NIC transfer in flight: a collective's bytes between two members' tiers, or a pipeline
// message.
struct Transfer {
  int from_gpu = 0, from_tier = 0, to_gpu = 0, to_tier = 0, stream = 0;
  int message = -1;  // a pipeline message: its id (to_gpu receives it)
};

struct Barrier {
  int arrived = 0;
  std::vector<std::pair<int, int>> waiting;  // (gpu, stream)
};

class EventCore {
 public:
  EventCore(const platform::Platform& p, std::vector<Gpu>& gpus, const std::vector<int>& index_of, StepHooks& hooks)
      : p_(p), topo_(p.topology()), gpus_(gpus), index_of_(index_of), hooks_(hooks), runs_(gpus.size()) {
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      runs_[i].port = SharedRate(topo_.nvlink_bytes_per_s);
      auto it = stage_tasks_.find(gpus_[i].program);
      if (it == stage_tasks_.end()) it = stage_tasks_.emplace(gpus_[i].program, stage_tasks(gpus_[i])).first;
      runs_[i].stage = &it->second;
      for (StreamCursor& c : runs_[i].cursors) c.observed = gpus_[i].observed;
      plan_slots_ = std::max(plan_slots_, runs_[i].stage->plan_slots);
      // A barrier's name (StreamRun::barrier) holds (rank, stream, group role) in 32 bits.
      if ((static_cast<std::uint64_t>(gpus_[i].rank) + 1) * workload::kStreams * workload::kGroupRoles > UINT32_MAX)
        throw std::logic_error("more GPUs than the event core's barrier names can tell apart");
    }
    // Under routed-load imbalance each EP exchange of a GPU has bytes of its own: planned each time.
    if (hooks_.plans_reusable()) kept_plans_.resize(gpus_.size() * plan_slots_);
    // message_waiters: one entry per pipeline message of the step (runner.cpp's wake lists).
    const std::size_t messages = gpus_.empty() ? 0 : gpus_.front().message_waiters->size();
    arrived_.assign(messages * gpus_.size(), 0);
    const std::size_t pipeline_depth = gpus_.empty() ? 0 : gpus_.front().pp_peers.size();
    pp_peers_.resize(pipeline_depth * gpus_.size());
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const std::vector<int>& peers = gpus_[i].pp_peers;
      if (peers.size() != pipeline_depth) throw std::logic_error("the event core's GPUs have pipelines of different depths");
      for (std::size_t pp = 0; pp < peers.size(); ++pp) pp_peers_[by_gpu(pp, static_cast<int>(i))] = peers[pp];
    }
  }

  EventCore(const EventCore&) = delete;
  EventCore& operator=(const EventCore&) = delete;

  static StageTasks stage_tasks(const Gpu& g) {
    const workload::RankProgram& program = *g.program;
    StageTasks st{.program = &program, .dependents = g.dependents, .message_waiters = g.message_waiters,
                  .ids = tasks_by_stream(program), .place = {}, .plan_slot = {}, .plan_slots = 0};
    st.place.resize(program.tasks.size());
    for (int s = 0; s < workload::kStreams; ++s)
      for (std::size_t k = 0; k < st.ids[s].size(); ++k)
        st.place[static_cast<std::size_t>(st.ids[s][k])] = {static_cast<std::uint8_t>(s), static_cast<std::uint32_t>(k)};
    std::map<PlanKey, std::uint32_t> slot_of;
    st.plan_slot.resize(program.tasks.size());
    for (std::size_t id = 0; id < program.tasks.size(); ++id)
      if (const Task& t = program.tasks[id]; t.kind == TaskKind::collective)
        st.plan_slot[id] = slot_of.try_emplace(plan_key(t, 1.0), static_cast<std::uint32_t>(slot_of.size())).first->second;
    st.plan_slots = static_cast<std::uint32_t>(slot_of.size());
    return st;
  }

  void run() {
    for (std::size_t i = 0; i < runs_.size(); ++i)
      for (int s = 0; s < workload::kStreams; ++s)
        if (!runs_[i].stage->ids[s].empty()) wake(static_cast<int>(i), s, Next::start_task, 0);
    // The GPUs' events and the NIC transfers' ends in time order (an event first at equal dates).
    while (!events_.empty() || nic_.busy()) {
      const double transfer_s = nic_.next_event_s();
      if (!events_.empty() && events_.top().t <= transfer_s) {
        const Event e = events_.pop();
        if (!events_.empty()) prefetch_for(events_.top());
        if (stale(e)) continue;  // its date must not move the clock: the step may be over
        now_ = std::max(now_, e.t);
        handle(e);
        continue;
      }
      now_ = std::max(now_, transfer_s);
      ended_.clear();
      nic_.advance(transfer_s, ended_);
      for (int id : ended_) on_transfer_done(id);
    }
    // SimGrid's clock ends with the step (nothing of it ran meanwhile).
    if (now_ > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(now_);
    for (std::size_t i = 0; i < runs_.size(); ++i)
      for (int s = 0; s < workload::kStreams; ++s) {
        const std::vector<int>& ids = runs_[i].stage->ids[s];
        if (const std::uint32_t k = runs_[i].cursors[s].k; k < ids.size())
          throw std::logic_error("the step cannot finish: task " + std::to_string(ids[k]) + " of rank " +
                                 std::to_string(gpus_[i].rank) + " never became ready");
      }
  }

 private:
  // Where GPU `gpu`'s entry of row `row` lies in a table stored row by row (a plan slot, a
  // message, a pipeline rank): what the GPUs of a stage read at about the same time, in about the
  // order of their index, so that one cache line read serves the next GPUs too.
  std::size_t by_gpu(std::size_t row, int gpu) const { return row * gpus_.size() + static_cast<std::size_t>(gpu); }

  // ---- the queue -------------------------------------------------------------------------
  // While one event is handled, fetch the lines the next one reads (the queue's top is the next
  // event: what a handler schedules goes after it).
  void prefetch_for(const Event& next) const {
    runs_[static_cast<std::size_t>(next.gpu())].prefetch(next.kind() == EventKind::wake, next.value);
    __builtin_prefetch(&gpus_[static_cast<std::size_t>(next.gpu())]);
  }
  void push(double t, EventKind kind, int gpu, std::uint64_t value) { events_.push(t, now_, kind, gpu, value); }

  void wake(int gpu, int stream, Next next, double delay_s) {
    runs_[static_cast<std::size_t>(gpu)].cursors[stream].next = next;
    push(now_ + delay_s, EventKind::wake, gpu, static_cast<std::uint64_t>(stream));
  }

  // A resource's due date from before its shares last changed.
  bool stale(const Event& e) const {
    const GpuRun& run = runs_[static_cast<std::size_t>(e.gpu())];
    return (e.kind() == EventKind::compute_due && e.value != static_cast<std::uint32_t>(run.sms.version())) ||
           (e.kind() == EventKind::port_due && e.value != static_cast<std::uint32_t>(run.port.version()));
  }

  void handle(const Event& e) {
    GpuRun& run = runs_[static_cast<std::size_t>(e.gpu())];
    switch (e.kind()) {
      case EventKind::wake:
        on_wake(e.gpu(), static_cast<int>(e.value));
        return;
      case EventKind::compute_due:
        finish_jobs(e.gpu(), run.sms, EventKind::compute_due);
        return;
      case EventKind::port_due:
        finish_jobs(e.gpu(), run.port, EventKind::port_due);
        return;
      case EventKind::transfer_done:
        on_transfer_done(static_cast<int>(e.value));
        return;
    }
  }

  // ---- a GPU's own resources ----------------------------------------------------------------
  void reschedule(int gpu, SharedRate& rate, EventKind kind) {
    if (rate.next_finish_s() < kNever) push(std::max(now_, rate.next_finish_s()), kind, gpu, rate.version());
  }

  void finish_jobs(int gpu, SharedRate& rate, EventKind kind) {
    done_.clear();
    rate.take_finished(now_, done_);
    reschedule(gpu, rate, kind);
    for (std::uint32_t o : done_) {
      const int stream = static_cast<int>(o / 256), what = static_cast<int>(o % 256);
      if (what == kOwnerCompute) finish_task(gpu, stream);
      else if (what == kOwnerPipeline) wake(gpu, stream, Next::deliver_message, topo_.nvlink_latency_s);
      else tier_step_done(gpu, stream, what);
    }
  }

  // ---- streams ----------------------------------------------------------------------------
  void on_wake(int gpu, int stream) {
    const GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    const StreamRun& r = run.streams[stream];
    switch (run.cursors[stream].next) {
      case Next::start_task: try_start(gpu, stream); return;
      case Next::finish_task: finish_task(gpu, stream); return;
      case Next::deliver_message: deliver(gpu, stream); return;
      case Next::tier_latency_done:
        if (r.tier + 1u < r.part->tiers.size()) start_tier(gpu, stream, r.tier + 1u);
        else leave_part(gpu, stream);
        return;
      case Next::part_done: leave_part(gpu, stream); return;
      case Next::barrier_released:
        if (!r.leaving) start_part(gpu, stream);
        else end_collective(gpu, stream);
        return;
    }
  }

  void try_start(int gpu, int stream) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    StreamCursor& c = run.cursors[stream];
    const std::vector<int>& ids = run.stage->ids[stream];
    if (c.k >= ids.size()) return;
    const int id = ids[c.k];
    const Task& t = run.stage->program->tasks[static_cast<std::size_t>(id)];
    if (!ready(gpu, t)) {
      c.waiting = true;
      return;
    }
    c.waiting = false;
    if (c.observed) gpus_[static_cast<std::size_t>(gpu)].task_start_s[static_cast<std::size_t>(stream)] = now_;
    execute(gpu, stream, id, t);
  }

  void finish_task(int gpu, int stream) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    StreamCursor& c = run.cursors[stream];
    const std::vector<int>& ids = run.stage->ids[stream];
    const int id = ids[c.k];
    if (c.observed) {
      Gpu& g = gpus_[static_cast<std::size_t>(gpu)];
      g.intervals.push_back({id, g.task_start_s[static_cast<std::size_t>(stream)], now_});
    }
    hooks_.task_finished();
    ++c.k;
    wake_ready(gpu, (*run.stage->dependents)[static_cast<std::size_t>(id)]);
    if (c.k < ids.size()) wake(gpu, stream, Next::start_task, 0);
  }

  bool ready(int gpu, const Task& t) const {
    const GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    for (int d : t.deps) {
      const auto [stream, index] = run.stage->place[static_cast<std::size_t>(d)];
      if (run.cursors[stream].k <= index) return false;
    }
    return t.wait_message.id < 0 || arrived_[by_gpu(static_cast<std::size_t>(t.wait_message.id), gpu)];
  }

  // Wakes each of `streams` that waits for a task which is now ready.
  void wake_ready(int gpu, std::uint8_t streams) {
    if (streams == 0) return;
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    for (int s = 0; s < workload::kStreams; ++s) {
      StreamCursor& c = run.cursors[s];
      if (!(streams & (1u << s)) || !c.waiting ||
          !ready(gpu, run.stage->program->tasks[static_cast<std::size_t>(run.stage->ids[s][c.k])]))
        continue;
      c.waiting = false;
      wake(gpu, s, Next::start_task, 0);
    }
  }

  void execute(int gpu, int stream, int id, const Task& t) {
    Gpu& g = gpus_[static_cast<std::size_t>(gpu)];
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    switch (t.kind) {
      case TaskKind::compute: {
        const double seconds = hooks_.start_compute(g, id);
        if (seconds <= 0) return wake(gpu, stream, Next::finish_task, 0);
        run.sms.add(now_, seconds, SharedRate::kUnbounded, owner(stream, kOwnerCompute));
        return reschedule(gpu, run.sms, EventKind::compute_due);
      }
      case TaskKind::host_copy:
        // The copy engines move it over the GPU's own host link, beside the SMs.
        return wake(gpu, stream, Next::finish_task, std::max(0.0, t.seconds));
      case TaskKind::pp_send: return send_message(gpu, stream, t);
      case TaskKind::collective: return start_collective(gpu, stream, id, t);
    }
  }

  // ---- pipeline messages --------------------------------------------------------------------
  // The global rank of GPU `gpu`'s pipeline rank `pp_rank`.
  int pp_peer(int gpu, int pp_rank) const {
    return pp_peers_[by_gpu(static_cast<std::size_t>(pp_rank), gpu)];
  }

  // Out of the sender's NVLink port within its domain (plus the port-to-port latency), else over
  // the fabric; delivered when it arrives.
  void send_message(int gpu, int stream, const Task& t) {
    Gpu& g = gpus_[static_cast<std::size_t>(gpu)];
    const int peer = pp_peer(gpu, t.peer_pp_rank);
    if (g.observed) count_message(g, topo_, peer, t.bytes);
    const auto size = static_cast<std::uint64_t>(t.bytes > 0 ? t.bytes : 0);
    if (size == 0) return deliver(gpu, stream);
    if (topo_.domain_of(peer) == topo_.domain_of(g.rank)) {
      GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
      run.port.add(now_, static_cast<double>(size), SharedRate::kUnbounded, owner(stream, kOwnerPipeline));
      return reschedule(gpu, run.port, EventKind::port_due);
    }
    start_transfer({.from_gpu = gpu, .to_gpu = index_of_[static_cast<std::size_t>(peer)], .stream = stream,
                    .message = t.message.id},
                   static_cast<double>(size), 0);
  }

  void deliver(int gpu, int stream) {
    const GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    const Task& t = run.stage->program->tasks[static_cast<std::size_t>(run.stage->ids[stream][run.cursors[stream].k])];
    const int to = index_of_[static_cast<std::size_t>(pp_peer(gpu, t.peer_pp_rank))];
    arrived_[by_gpu(static_cast<std::size_t>(t.message.id), to)] = 1;
    wake_ready(to, (*runs_[static_cast<std::size_t>(to)].stage->message_waiters)[static_cast<std::size_t>(t.message.id)]);
    finish_task(gpu, stream);
  }

  // ---- collectives --------------------------------------------------------------------------
  // Its kernels take their share of the SMs from the start; every member waits for the last to
  // arrive, runs its part, and waits again for the last to finish (a member's data is complete
  // only when every member's has arrived; NVLink bytes leave through each member's port with
  // nobody receiving them).
  void start_collective(int gpu, int stream, int id, const Task& t) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    const RunPlan plan = run_plan(gpu, stream, id, t);
    if (plan.group_size <= 1) return wake(gpu, stream, Next::finish_task, 0);
    StreamRun& r = run.streams[stream];
    r.part = plan.part;
    r.group = plan.group;
    r.member_index = plan.member_index;
    r.leaving = false;
    r.sm_job = -1;
    const int sm_count = topo_.gpu_sm_count;
    if (plan.sms > 0 && sm_count > 0) {
      const double share = std::min(1.0, static_cast<double>(plan.sms) / sm_count);
      r.sm_job = static_cast<std::int16_t>(run.sms.add(now_, SharedRate::kUnbounded, share, owner(stream, kOwnerSmHold)));
      reschedule(gpu, run.sms, EventKind::compute_due);
    }
    r.group_size = plan.group_size;
    r.barrier = (static_cast<std::uint32_t>(plan.first_rank) * workload::kStreams + static_cast<std::uint32_t>(stream)) *
                    workload::kGroupRoles +
                static_cast<std::uint32_t>(t.group);
    arrive(gpu, stream);
  }

  // Collective `id` (task `t`) as GPU `gpu` runs it: kept in its plan slot after the first time,
  // unless its bytes vary (routed-load imbalance). An observed GPU counts its traffic each time.
  RunPlan run_plan(int gpu, int stream, int id, const Task& t) {
    KeptPlan* kept = nullptr;
    if (!kept_plans_.empty()) {
      kept = &kept_plans_[by_gpu(runs_[static_cast<std::size_t>(gpu)].stage->plan_slot[static_cast<std::size_t>(id)], gpu)];
      if (kept->shared != 0 && !runs_[static_cast<std::size_t>(gpu)].cursors[stream].observed) {
        RunPlan plan = shared_plans_[kept->shared - 1];
        plan.member_index = kept->member_index;
        return plan;
      }
    }
    Gpu& g = gpus_[static_cast<std::size_t>(gpu)];
    const platform::Group& group = *g.groups[static_cast<int>(t.group)];
    RunPlan made{.group = &group,
                 .group_size = static_cast<int>(group.ranks.size()),
                 .first_rank = group.ranks.empty() ? 0 : group.ranks.front()};
    if (made.group_size > 1) {
      PlannedCollective& plan = hooks_.planned(g, t, group);
      if (g.observed) count_traffic(g, t, plan);
      if (!plan.full_part) std::tie(plan.full_part, plan.member_index) = parts_.get(group, plan.load, g.rank);
      if (plan.full_part->tiers.size() > StreamRun::kMaxTiers)
        throw std::logic_error("a collective's part has more tiers than the NVLink and the NIC tier");
      made.part = plan.full_part;
      made.member_index = plan.member_index;
      made.sms = plan.sms;
    }
    if (kept) *kept = keep(made);
    return made;
  }

  // `plan` kept: its group's members share all of it but their place.
  KeptPlan keep(const RunPlan& plan) {
    const auto [it, added] = shared_plan_index_.try_emplace(std::tuple(plan.group, plan.part, plan.sms),
                                                            static_cast<std::uint32_t>(shared_plans_.size()));
    if (added) {
      shared_plans_.push_back(plan);
      shared_plans_.back().member_index = 0;
    }
    return {.shared = it->second + 1, .member_index = plan.member_index};
  }

  void arrive(int gpu, int stream) {
    const StreamRun& r = runs_[static_cast<std::size_t>(gpu)].streams[stream];
    Barrier& b = barriers_[r.barrier];
    b.waiting.emplace_back(gpu, stream);
    if (++b.arrived < r.group_size) return;
    for (const auto& waiter : b.waiting) runs_[static_cast<std::size_t>(waiter.first)].prefetch_released(!r.leaving);
    for (const auto& [member, member_stream] : b.waiting) wake(member, member_stream, Next::barrier_released, 0);
    b.waiting.clear();
    b.arrived = 0;
  }

  void start_part(int gpu, int stream) {
    StreamRun& r = runs_[static_cast<std::size_t>(gpu)].streams[stream];
    const std::size_t tiers = r.part->tiers.size();
    r.tiers = {};
    if (tiers == 0) return leave_part(gpu, stream);
    if (r.part->sequential) return start_tier(gpu, stream, 0);
    for (std::size_t i = 0; i < tiers; ++i) start_tier(gpu, stream, i);
  }

  void start_tier(int gpu, int stream, std::size_t i) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    StreamRun& r = run.streams[stream];
    r.tier = static_cast<std::uint8_t>(i);
    const platform::FullTier& tier = r.part->tiers[i];
    TierRun& tr = r.tiers[i];
    tr.done_at_s = now_;
    tr.pending = static_cast<int>(tier.sends.size()) + tier.incoming_leaf + tier.incoming_spine;
    const int tier_index = static_cast<int>(i);
    for (const FullTransfer& send : tier.sends) {
      if (send.route == FullRoute::nvlink) {
        run.port.add(now_, send.bytes, send.rate_cap > 0 ? send.rate_cap : SharedRate::kUnbounded, owner(stream, tier_index));
        reschedule(gpu, run.port, EventKind::port_due);
        continue;
      }
      const int to = index_of_[static_cast<std::size_t>(MemberParts::receiver(*r.group, r.member_index, send))];
      auto& posted = runs_[static_cast<std::size_t>(to)].receives_posted[stream][route_slot(send.route)];
      if (posted.empty()) {
        runs_[static_cast<std::size_t>(to)].sends_waiting[stream][route_slot(send.route)].push_back(
            {gpu, tier_index, send.bytes, send.rate_cap});
        continue;
      }
      const int to_tier = posted.front();
      posted.erase(posted.begin());
      start_collective_transfer(gpu, tier_index, to, to_tier, stream, send.bytes, send.rate_cap);
    }
    post_receives(gpu, stream, tier_index, FullRoute::leaf, tier.incoming_leaf);
    post_receives(gpu, stream, tier_index, FullRoute::spine, tier.incoming_spine);
    if (tr.pending == 0) tier_complete(gpu, stream, i);
  }

  static int route_slot(FullRoute route) { return route == FullRoute::leaf ? 0 : 1; }

  void post_receives(int gpu, int stream, int tier, FullRoute route, int count) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    auto& waiting = run.sends_waiting[stream][route_slot(route)];
    for (int c = 0; c < count; ++c) {
      if (waiting.empty()) {
        run.receives_posted[stream][route_slot(route)].push_back(tier);
        continue;
      }
      const PendingSend send = waiting.front();
      waiting.erase(waiting.begin());
      start_collective_transfer(send.gpu, send.tier, gpu, tier, stream, send.bytes, send.rate_cap);
    }
  }

  void start_collective_transfer(int from, int from_tier, int to, int to_tier, int stream, double bytes, double rate_cap) {
    start_transfer({.from_gpu = from, .from_tier = from_tier, .to_gpu = to, .to_tier = to_tier, .stream = stream}, bytes,
                   rate_cap);
  }

  // One of tier i's transfers or receives is done.
  void tier_step_done(int gpu, int stream, int i) {
    TierRun& tr = runs_[static_cast<std::size_t>(gpu)].streams[stream].tiers[static_cast<std::size_t>(i)];
    if (--tr.pending == 0) tier_complete(gpu, stream, static_cast<std::size_t>(i));
  }

  // Sequential tiers: the next starts once this one's hops beyond the first have passed (the
  // library's latency after the last). Side by side: the part ends when every tier's data and
  // hops are done, then the library's latency.
  void tier_complete(int gpu, int stream, std::size_t i) {
    StreamRun& r = runs_[static_cast<std::size_t>(gpu)].streams[stream];
    TierRun& tr = r.tiers[i];
    tr.complete = true;
    tr.done_at_s = now_;
    if (r.part->sequential) {
      r.tier = static_cast<std::uint8_t>(i);
      const double delay = r.part->tiers[i].extra_latency_s + (i + 1 == r.part->tiers.size() ? r.part->library_latency_s : 0);
      return wake(gpu, stream, Next::tier_latency_done, delay);
    }
    double end = now_;
    for (std::size_t k = 0; k < r.part->tiers.size(); ++k) {
      if (!r.tiers[k].complete) return;
      end = std::max(end, r.tiers[k].done_at_s + r.part->tiers[k].extra_latency_s);
    }
    wake(gpu, stream, Next::part_done, end + r.part->library_latency_s - now_);
  }

  void leave_part(int gpu, int stream) {
    runs_[static_cast<std::size_t>(gpu)].streams[stream].leaving = true;
    arrive(gpu, stream);
  }

  void end_collective(int gpu, int stream) {
    GpuRun& run = runs_[static_cast<std::size_t>(gpu)];
    StreamRun& r = run.streams[stream];
    if (r.sm_job >= 0) {
      run.sms.remove(now_, r.sm_job);
      r.sm_job = -1;
      reschedule(gpu, run.sms, EventKind::compute_due);
    }
    finish_task(gpu, stream);
  }

  // ---- NIC transfers (nic_transfers.hpp) --------------------------------------------
  void start_transfer(const Transfer& tr, double bytes, double rate_cap) {
    const int id = allocate_transfer();
    transfers_[static_cast<std::size_t>(id)] = tr;
    if (bytes > 0) return nic_.start(id, tr.from_gpu, tr.to_gpu, bytes, rate_cap, now_);
    // An empty transfer takes its route's latency (as SimGrid 3.32, which does not start one).
    push(now_ + nic_.latency_s(tr.from_gpu, tr.to_gpu), EventKind::transfer_done, 0, static_cast<std::uint64_t>(id));
  }

  int allocate_transfer() {
    if (!free_transfers_.empty()) {
      const int id = free_transfers_.back();
      free_transfers_.pop_back();
      return id;
    }
    transfers_.emplace_back();
    return static_cast<int>(transfers_.size() - 1);
  }

  void on_transfer_done(int id) {
    const Transfer tr = transfers_[static_cast<std::size_t>(id)];
    free_transfers_.push_back(id);
    if (tr.message >= 0) return deliver(tr.from_gpu, tr.stream);
    tier_step_done(tr.from_gpu, tr.stream, tr.from_tier);
    tier_step_done(tr.to_gpu, tr.stream, tr.to_tier);
  }

  const platform::Platform& p_;
  const platform::Topology& topo_;
  std::vector<Gpu>& gpus_;
  const std::vector<int>& index_of_;
  StepHooks& hooks_;
  std::vector<GpuRun> runs_;
  // Each stage program's tasks by stream.
  std::map<const workload::RankProgram*, StageTasks> stage_tasks_;
  // GPU g's collective of plan slot k at by_gpu(k, g) (none under routed-load imbalance), and
  // the plans its groups share, once each.
  std::uint32_t plan_slots_ = 0;
  std::vector<KeptPlan> kept_plans_;
  std::vector<RunPlan> shared_plans_;
  std::map<std::tuple<const platform::Group*, const platform::FullMemberPart*, int>, std::uint32_t> shared_plan_index_;
  // Which pipeline messages each GPU received (by_gpu(message, gpu)) and the global rank of each
  // GPU's pipeline peers (by_gpu(pp rank, gpu)): a vector of each GPU's own cost a line (and a
  // miss) each.
  std::vector<char> arrived_;
  std::vector<int> pp_peers_;
  EventQueue events_;
  double now_ = 0;
  std::vector<std::uint32_t> done_;
  FlatMap<Barrier> barriers_;  // by name (StreamRun::barrier)
  MemberParts parts_{p_};
  std::vector<Transfer> transfers_;
  std::vector<int> free_transfers_;
  std::vector<int> ended_;
  NicTransfers nic_{p_, gpus_};
};

}  // namespace

void run_event_core(const platform::Platform& platform, std::vector<Gpu>& gpus, const std::vector<int>& index_of,
                    StepHooks& hooks) {
  EventCore(platform, gpus, index_of, hooks).run();
}

}  // namespace moesim::engine
