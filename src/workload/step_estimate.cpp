// The step estimate: the step builder's passes and schedule, timed with closed forms instead of
// SimGrid. Each stream runs its tasks in issue order, as CUDA streams (and the engine) do.
#include "moesim/workload/step_estimate.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "moesim/model/flops.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/plan/schedule.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/topology.hpp"
#include "moesim/workload/step_builder.hpp"
#include "pass_lowering.hpp"

namespace moesim::workload {

namespace {

using platform::CollectiveKind;

// The collectives of one pipeline rank's representative GPU (the one the folded engine
// simulates), priced by their closed forms (EP exchanges by the dispatcher's plan on an idle
// platform); identical layers ask for the same ones.
class RankPricing {
 public:
  RankPricing(const platform::Topology& topo, const plan::Layout& l, int pp_rank,
              const platform::EpExchangeRequest& ep_request)
      : topo_(topo), rank_(l.dense_rank(0, 0, 0, pp_rank)), ep_request_(ep_request) {
    const int rank = rank_;
    groups_[static_cast<int>(GroupRole::tp)].ranks = l.tp_group(rank);
    groups_[static_cast<int>(GroupRole::ep)].ranks = l.ep_group(rank);
    groups_[static_cast<int>(GroupRole::dp)].ranks = l.dp_group(rank);
    groups_[static_cast<int>(GroupRole::edp)].ranks = l.edp_group(rank);
    groups_[static_cast<int>(GroupRole::dp_shard)].ranks = l.dp_shard_group(rank);
    groups_[static_cast<int>(GroupRole::dp_replicate)].ranks = l.dp_replicate_group(rank);
    groups_[static_cast<int>(GroupRole::edp_shard)].ranks = l.edp_shard_group(rank);
    groups_[static_cast<int>(GroupRole::edp_replicate)].ranks = l.edp_replicate_group(rank);
  }

  double seconds(CollectiveKind kind, GroupRole role, double bytes) {
    const auto key = std::make_tuple(static_cast<int>(kind), static_cast<int>(role), bytes);
    const auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const double s = platform::closed_form_seconds(topo_, kind, groups_[static_cast<int>(role)], bytes);
    cache_.emplace(key, s);
    return s;
  }

  double seconds(const PassItem& item) {
    if (item.group != GroupRole::ep || item.ep_token_bytes <= 0)
      return seconds(item.collective, item.group, item.bytes);
    const bool probabilities = ep_carries_probabilities(item.activity);
    const auto key = std::make_tuple(item.ep_tokens, item.ep_token_bytes, item.ep_combine_kernel, probabilities);
    const auto it = ep_cache_.find(key);
    if (it != ep_cache_.end()) return it->second;
    const platform::EpExchangeRequest r = platform::one_exchange(
        ep_request_, item.ep_combine_kernel ? platform::EpKernel::combine : platform::EpKernel::dispatch,
        item.ep_tokens, item.ep_token_bytes, probabilities);
    const double s = platform::plan_ep_exchange_folded(topo_, groups_[static_cast<int>(GroupRole::ep)], r, rank_).seconds;
    ep_cache_.emplace(key, s);
    return s;
  }

 private:
  const platform::Topology& topo_;
  int rank_;
  platform::EpExchangeRequest ep_request_;
  platform::Group groups_[kGroupRoles];
  std::map<std::tuple<int, int, double>, double> cache_;
  std::map<std::tuple<double, double, bool, bool>, double> ep_cache_;
};

// Where a rank's streams are free, and what its passes cost.
struct RankClock {
  double compute_free = 0;
  double tp_free = 0, ep_free = 0, pp_free = 0, dp_free = 0;
  double gather_free = 0;     // per-block sharding's gather stream (its reductions use dp_free)
  double copy_free = 0;       // activation offloading's host-copy stream
  // The latest EP collective: a dispatcher on SMs holds `sm_fraction` of the GPU meanwhile.
  double ep_start = 0, ep_end = 0, sm_fraction = 0;
  double compute_s = 0;       // compute issued so far
  double pass_wall_s = 0;     // sum over passes (or pairs) of start-to-end time
  double pass_compute_s = 0;  // their compute
};

// One item of a pass with its duration on an idle platform.
struct PricedItem {
  enum class Kind : std::uint8_t { compute, beside, tp_comm, ep_comm, block_gather, block_reduce, offload, reload } kind =
      Kind::compute;
  double seconds = 0;
  int block = -1;  // per-block sharding: the block it belongs to (or gathers, or reduces)
};

std::vector<PricedItem> priced(const Scenario& s, const std::vector<PassItem>& items, RankPricing& pricing) {
  std::vector<PricedItem> out;
  out.reserve(items.size());
  for (const PassItem& item : items) {
    PricedItem p;
    p.block = item.block;
    if (item.block_task == PassItem::BlockTask::offload || item.block_task == PassItem::BlockTask::reload) {
      p.kind = item.block_task == PassItem::BlockTask::offload ? PricedItem::Kind::offload : PricedItem::Kind::reload;
      p.seconds = host_copy_seconds(s, item.bytes);
    } else if (item.block_task != PassItem::BlockTask::no) {
      p.kind = item.block_task == PassItem::BlockTask::gather ? PricedItem::Kind::block_gather : PricedItem::Kind::block_reduce;
      p.seconds = pricing.seconds(item.collective, item.group, item.bytes);
    } else if (!item.is_comm) {
      p.kind = item.beside_previous_comm ? PricedItem::Kind::beside : PricedItem::Kind::compute;
      p.seconds = item.cost.pipelined_seconds;
    } else {
      p.kind = item.group == GroupRole::ep ? PricedItem::Kind::ep_comm : PricedItem::Kind::tp_comm;
      p.seconds = pricing.seconds(item);
    }
    out.push_back(p);
  }
  return out;
}

// One pass being replayed: its items and the time its next item may start.
struct Cursor {
  const std::vector<PricedItem>* items = nullptr;
  std::size_t next = 0;
  double ready = 0;
  std::map<int, double> block_gathered;  // per-block sharding: when a block's parameters are in
  bool done() const { return next >= items->size(); }
};

// Runs `seconds` of compute on the rank's compute stream, not before `after`: at full speed
// until the dispatcher's SMs are taken, on the rest of the GPU while they are. Returns its end.
double run_compute(RankClock& clock, double seconds, double after) {
  double t = std::max(clock.compute_free, after);
  double left_s = seconds;
  clock.compute_s += seconds;
  if (t < clock.ep_start) {
    const double run = std::min(left_s, clock.ep_start - t);
    t += run;
    left_s -= run;
  }
  if (left_s > 0 && t < clock.ep_end && clock.sm_fraction > 0) {
    const double speed = 1 - clock.sm_fraction;
    const double fits_s = (clock.ep_end - t) * speed;
    if (left_s <= fits_s) {
      t += left_s / speed;
      left_s = 0;
    } else {
      left_s -= fits_s;
      t = clock.ep_end;
    }
  }
  clock.compute_free = t + left_s;
  return clock.compute_free;
}

// One segment of a pass, as StepEmitter::segment issues it: compute up to and including the next
// communication, then the compute that runs beside that communication.
void replay_segment(Cursor& c, RankClock& clock) {
  using Kind = PricedItem::Kind;
  const std::vector<PricedItem>& items = *c.items;
  // A block's first item waits for its parameters.
  const auto gathered = [&c](const PricedItem& item) {
    const auto it = c.block_gathered.find(item.block);
    if (it == c.block_gathered.end()) return 0.0;
    const double at = it->second;
    c.block_gathered.erase(it);
    return at;
  };
  while (!c.done()) {
    const PricedItem& item = items[c.next++];
    if (item.kind == Kind::block_gather || item.kind == Kind::reload) {
      double& stream = item.kind == Kind::reload ? clock.copy_free : clock.gather_free;
      stream = std::max(stream, c.ready) + item.seconds;
      double& in = c.block_gathered[item.block];
      in = std::max(in, stream);
      continue;
    }
    if (item.kind == Kind::block_reduce || item.kind == Kind::offload) {
      double& stream = item.kind == Kind::offload ? clock.copy_free : clock.dp_free;
      stream = std::max(stream, c.ready) + item.seconds;
      continue;
    }
    c.ready = std::max(c.ready, gathered(item));
    if (item.kind == Kind::compute) {
      c.ready = run_compute(clock, item.seconds, c.ready);
      continue;
    }
    if (item.kind == Kind::beside) {
      run_compute(clock, item.seconds, gathered(item));
      continue;
    }
    const bool ep = item.kind == Kind::ep_comm;
    double& stream = ep ? clock.ep_free : clock.tp_free;
    const double start = std::max(stream, c.ready);
    stream = start + item.seconds;
    c.ready = stream;
    if (ep) {
      clock.ep_start = start;
      clock.ep_end = stream;
    }
    while (!c.done() && items[c.next].kind == Kind::beside) {
      const PricedItem& beside = items[c.next++];
      run_compute(clock, beside.seconds, gathered(beside));
    }
    return;
  }
}

struct Message {
  bool sent = false;
  double arrival_s = 0;
};

class PipelineReplay {
 public:
  PipelineReplay(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal)
      : s_(s), l_(l), cal_(cal), lowering_(s, l, cal),
        topo_(platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision)) {
    const double pp_bytes = pp_message_bytes(s, l);
    const platform::EpExchangeRequest ep_request = platform::ep_exchange_request(s.recipe, s.stack, s.model);
    for (int r = 0; r < l.pp; ++r) {
      pricing_.emplace_back(topo_, l, r, ep_request);
      schedules_.push_back(plan::pipeline_schedule(l, r));
      // A send goes to the rank holding the next (forward) or previous (backward) stage: a
      // neighbour, or under dualpipe the ranks at both ends.
      for (int peer = 0; peer < l.pp; ++peer) {
        platform::Group g;
        g.ranks = {l.dense_rank(0, 0, 0, r), l.dense_rank(0, 0, 0, peer)};
        send_s_[{r, peer}] = peer == r ? 0.0 : platform::closed_form_seconds(topo_, CollectiveKind::send_recv, g, pp_bytes);
      }
    }
    clocks_.resize(static_cast<std::size_t>(l.pp));
    if (s.system.gpu.sm_count > 0)
      for (RankClock& c : clocks_) c.sm_fraction = static_cast<double>(s.recipe.dispatcher_sms) / s.system.gpu.sm_count;
    passes_.resize(static_cast<std::size_t>(l.pp * l.chunks * kPasses));
    messages_.resize(static_cast<std::size_t>(2 * l.microbatches * stages()));
    last_backward_.assign(static_cast<std::size_t>(l.pp * l.chunks), 0.0);
  }

  StepEstimate run() {
    for (int r = 0; r < l_.pp; ++r) gather_parameters(r);
    std::vector<std::size_t> next(static_cast<std::size_t>(l_.pp), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < l_.pp; ++r)
        while (advance(r, next[static_cast<std::size_t>(r)])) progress = true;
    }
    StepEstimate e;
    e.model_flop_per_gpu = model::model_flops_per_token(s_.model, s_.training.seq_len, s_.training.mtp_layers).total() *
                           s_.training.global_batch * s_.training.seq_len / s_.gpus;
    double slowest_passes_s = -1;
    for (int r = 0; r < l_.pp; ++r) {
      RankClock& c = clocks_[static_cast<std::size_t>(r)];
      const double passes_end = c.compute_free;
      const double optimizer_end = finish_step(r);
      e.step_time_s = std::max(e.step_time_s, optimizer_end);
      if (c.pass_wall_s <= slowest_passes_s) continue;
      slowest_passes_s = c.pass_wall_s;
      e.compute_s = c.compute_s;
      e.exposed_comm_s = c.pass_wall_s - c.pass_compute_s;
      e.optimizer_s = optimizer_seconds_[static_cast<std::size_t>(r)];
      e.exposed_dp_s = first_forward_[static_cast<std::size_t>(r)] + (optimizer_end - e.optimizer_s - passes_end);
    }
    e.pipeline_s = std::max(0.0, e.step_time_s - e.compute_s - e.exposed_comm_s - e.exposed_dp_s - e.optimizer_s);
    e.tflops_per_gpu = e.step_time_s > 0 ? e.model_flop_per_gpu / e.step_time_s / 1e12 : 0;
    return e;
  }

 private:
  static constexpr int kPasses = 4;  // forward, backward, input_grad, weight_grad
  int stages() const { return l_.virtual_stages(); }
  // A (rank, chunk, pass) triple as one number (the pass cache's and the replay key's).
  int pass_id(int r, const plan::ScheduleEntry& e) const { return (r * l_.chunks + e.chunk) * kPasses + static_cast<int>(e.pass); }
  std::size_t message(bool gradient, int mb, int stage) const {
    return static_cast<std::size_t>(((gradient ? 1 : 0) * l_.microbatches + mb) * stages() + stage);
  }
  // Chunks in virtual-stage order (the order the step builder gathers and reduces them in).
  std::vector<int> chunks_by_stage(int r) const {
    std::vector<int> c(static_cast<std::size_t>(l_.chunks));
    for (int i = 0; i < l_.chunks; ++i) c[static_cast<std::size_t>(i)] = i;
    std::sort(c.begin(), c.end(), [&](int a, int b) { return l_.stage_index(r, a) < l_.stage_index(r, b); });
    return c;
  }

  const std::vector<PricedItem>& pass(int r, const plan::ScheduleEntry& e) {
    auto& slot = passes_[static_cast<std::size_t>(pass_id(r, e))];
    if (!slot) slot = priced(s_, lowering_.lower(r, e.chunk, e.pass), pricing_[static_cast<std::size_t>(r)]);
    return *slot;
  }

  // The message an entry waits for: the previous stage's activations (forward) or the next
  // stage's gradients (backward, B); none at the ends of the pipeline, nor for a W (its inputs
  // are on the rank).
  const Message* input(int r, const plan::ScheduleEntry& e) const {
    const int v = l_.stage_index(r, e.chunk);
    const bool needs_gradient = e.pass == plan::Pass::backward || e.pass == plan::Pass::input_grad;
    if (e.pass == plan::Pass::forward && v > 0) return &messages_[message(false, e.microbatch, v)];
    if (needs_gradient && v < stages() - 1) return &messages_[message(true, e.microbatch, v)];
    return nullptr;
  }

  // The distributed optimizer gathers each chunk's parameters before its first forward, in chunk
  // order on the DP stream; without overlap every forward waits for all of them.
  void gather_parameters(int r) {
    RankClock& c = clocks_[static_cast<std::size_t>(r)];
    RankPricing& p = pricing_[static_cast<std::size_t>(r)];
    const double bytes_per_param = param_gather_bytes_per_param(s_);
    gathered_.emplace_back();
    gathered_.back().assign(static_cast<std::size_t>(l_.chunks), 0.0);
    double first = -1;
    // (Per-block sharding gathers in the passes instead: an empty order.)
    for (int chunk : l_.fsdp ? std::vector<int>{} : chunks_by_stage(r)) {
      const plan::ParamShard shard = plan::chunk_params(s_, l_, r, chunk);
      if (l_.dp * l_.cp > 1 && shard.dense_params > 0)
        c.dp_free += p.seconds(CollectiveKind::all_gather, GroupRole::dp, shard.dense_params * bytes_per_param);
      if (l_.edp > 1 && shard.expert_params > 0)
        c.dp_free += p.seconds(CollectiveKind::all_gather, GroupRole::edp, shard.expert_params * bytes_per_param);
      gathered_.back()[static_cast<std::size_t>(chunk)] = c.dp_free;
      if (first < 0) first = c.dp_free;
    }
    if (!s_.recipe.overlap_param_gather) std::fill(gathered_.back().begin(), gathered_.back().end(), c.dp_free);
    first_forward_.push_back(s_.recipe.overlap_param_gather ? std::max(first, 0.0) : c.dp_free);
  }

  // Replays rank r's next schedule entry (or F&B step) if its inputs have arrived.
  bool advance(int r, std::size_t& next) {
    const std::vector<plan::ScheduleEntry>& order = schedules_[static_cast<std::size_t>(r)];
    if (next >= order.size()) return false;
    const bool pair = next + 1 < order.size() && order[next + 1].paired;
    const std::size_t count = pair ? 2 : 1;
    Cursor cursors[2];
    for (std::size_t k = 0; k < count; ++k) {
      const plan::ScheduleEntry& e = order[next + k];
      const Message* in = input(r, e);
      if (in && !in->sent) return false;
      Cursor& c = cursors[k];
      c.items = &pass(r, e);
      c.ready = in ? in->arrival_s : 0;
      if (e.pass == plan::Pass::forward)
        c.ready = std::max(c.ready, gathered_[static_cast<std::size_t>(r)][static_cast<std::size_t>(e.chunk)]);
    }
    // An F&B step starts once both passes' inputs are in (the step builder's marker task).
    if (pair) cursors[0].ready = std::max(cursors[0].ready, cursors[1].ready);
    RankClock& clock = clocks_[static_cast<std::size_t>(r)];
    const double start = std::max(clock.compute_free, std::min(cursors[0].ready, cursors[count - 1].ready));
    const double compute_before = clock.compute_s;
    replay(r, order, next, count, cursors, clock);
    double end = 0;
    for (std::size_t k = 0; k < count; ++k) {
      end = std::max(end, cursors[k].ready);
      send(r, order[next + k], std::max(cursors[k].ready, 0.0));
    }
    clock.pass_wall_s += std::max(end, clock.compute_free) - start;
    clock.pass_compute_s += clock.compute_s - compute_before;
    next += count;
    return true;
  }

  // Alternates the cursors' segments when the recipe overlaps an F&B step (each pass's
  // communication hides behind the other's compute), else runs them one after the other. A replay's course depends only on the passes and on where the rank's streams, the
  // dispatcher's SMs and the passes' inputs stand relative to its start: steady-state 1F1B
  // repeats a few such situations thousands of times, so the first replay of each is kept (as
  // offsets from its start) and the others reuse it. Times in the key are rounded to the
  // nanosecond: a nanosecond per pass moves a step of seconds by microseconds.
  void replay(int r, const std::vector<plan::ScheduleEntry>& order, std::size_t next, std::size_t count, Cursor* cursors,
              RankClock& clock) {
    constexpr long long kIrrelevant = std::numeric_limits<long long>::min();
    const double s = std::max(clock.compute_free, cursors[0].ready);
    const double first_input = count == 2 ? std::min(cursors[0].ready, cursors[1].ready) : cursors[0].ready;
    const auto ns = [s](double t) { return static_cast<long long>(std::floor((t - s) * 1e9 + 0.5)); };
    // A stream free before every input is in, or SMs released before any compute can start (at
    // s), cannot change the replay.
    const bool sms_held = clock.ep_end > s;
    ReplayKey key = {pass_id(r, order[next]), count == 2 ? pass_id(r, order[next + 1]) : -1,
                     ns(clock.compute_free),
                     ns(cursors[0].ready),
                     count == 2 ? ns(cursors[1].ready) : 0,
                     clock.tp_free > first_input ? ns(clock.tp_free) : kIrrelevant,
                     clock.ep_free > first_input ? ns(clock.ep_free) : kIrrelevant,
                     sms_held ? ns(clock.ep_start) : kIrrelevant,
                     sms_held ? ns(clock.ep_end) : kIrrelevant,
                     l_.fsdp && clock.gather_free > first_input ? ns(clock.gather_free) : kIrrelevant,
                     l_.fsdp && clock.dp_free > first_input ? ns(clock.dp_free) : kIrrelevant,
                     clock.copy_free > first_input ? ns(clock.copy_free) : kIrrelevant};
    if (const auto it = replays_.find(key); it != replays_.end()) {
      const ReplayOutcome& m = it->second;
      for (std::size_t k = 0; k < count; ++k) cursors[k].ready = s + m.cursor_end_s[k];
      clock.compute_free = s + m.compute_free_s;
      for (auto [field, offset] : {std::pair{&clock.tp_free, m.tp_free_s}, {&clock.ep_free, m.ep_free_s},
                                   {&clock.ep_start, m.ep_start_s}, {&clock.ep_end, m.ep_end_s},
                                   {&clock.gather_free, m.gather_free_s}, {&clock.dp_free, m.dp_free_s},
                                   {&clock.copy_free, m.copy_free_s}})
        if (offset != kUntouched) *field = s + offset;
      clock.compute_s += m.compute_s;
      return;
    }
    const RankClock before = clock;
    if (s_.recipe.ep_overlap) {
      while (!cursors[0].done() || (count == 2 && !cursors[1].done()))
        for (std::size_t k = 0; k < count; ++k)
          if (!cursors[k].done()) replay_segment(cursors[k], clock);
    } else {
      for (std::size_t k = 0; k < count; ++k)
        while (!cursors[k].done()) replay_segment(cursors[k], clock);
    }
    const auto offset = [s](double after, double was) { return after != was ? after - s : kUntouched; };
    ReplayOutcome m;
    for (std::size_t k = 0; k < count; ++k) m.cursor_end_s[k] = cursors[k].ready - s;
    m.compute_free_s = clock.compute_free - s;
    m.tp_free_s = offset(clock.tp_free, before.tp_free);
    m.ep_free_s = offset(clock.ep_free, before.ep_free);
    m.ep_start_s = offset(clock.ep_start, before.ep_start);
    m.ep_end_s = offset(clock.ep_end, before.ep_end);
    m.gather_free_s = offset(clock.gather_free, before.gather_free);
    m.dp_free_s = offset(clock.dp_free, before.dp_free);
    m.copy_free_s = offset(clock.copy_free, before.copy_free);
    m.compute_s = clock.compute_s - before.compute_s;
    replays_.emplace(key, m);
  }

  // The pass's output travels to the next (forward) or previous (backward, B) virtual stage:
  // over the PP link, or at once when that stage is the rank's own (the bottom of a V). A W's
  // results stay on the rank.
  void send(int r, const plan::ScheduleEntry& e, double done_s) {
    if (e.pass == plan::Pass::backward || e.pass == plan::Pass::weight_grad)
      last_backward_[static_cast<std::size_t>(r * l_.chunks + e.chunk)] = done_s;
    if (e.pass == plan::Pass::weight_grad) return;
    const bool forward = e.pass == plan::Pass::forward;
    const int v = l_.stage_index(r, e.chunk);
    const int to = forward ? v + 1 : v - 1;
    if (to < 0 || to >= stages()) return;
    Message& m = messages_[message(!forward, e.microbatch, to)];
    m.sent = true;
    const int peer = l_.holder(to, e.microbatch).pp_rank;
    if (peer == r) {
      m.arrival_s = done_s;
      return;
    }
    RankClock& c = clocks_[static_cast<std::size_t>(r)];
    c.pp_free = std::max(c.pp_free, done_s) + send_s_.at({r, peer});
    m.arrival_s = c.pp_free;
  }

  // Gradient reduce-scatters (each chunk after its last weight gradients when overlapped, else
  // after the pipeline drains; the last stage first), then the Adam step. Returns the rank's end
  // of step.
  double finish_step(int r) {
    RankClock& c = clocks_[static_cast<std::size_t>(r)];
    RankPricing& p = pricing_[static_cast<std::size_t>(r)];
    const double drained = std::max({c.compute_free, c.tp_free, c.ep_free, c.pp_free});
    // Per-block sharding reduced each block's gradients in its backward, on the DP stream.
    double synced = l_.fsdp ? std::max(drained, c.dp_free) : drained;
    std::vector<int> order = l_.fsdp ? std::vector<int>{} : chunks_by_stage(r);
    std::reverse(order.begin(), order.end());
    for (int chunk : order) {
      const plan::ParamShard shard = plan::chunk_params(s_, l_, r, chunk);
      const double after = s_.recipe.overlap_grad_reduce ? last_backward_[static_cast<std::size_t>(r * l_.chunks + chunk)]
                                                         : drained;
      c.dp_free = std::max(c.dp_free, after);
      if (l_.dp * l_.cp > 1 && shard.dense_params > 0)
        c.dp_free += p.seconds(CollectiveKind::reduce_scatter, GroupRole::dp, shard.dense_params * grad_reduce_bytes_per_param(s_));
      if (l_.edp > 1 && shard.expert_params > 0)
        c.dp_free += p.seconds(CollectiveKind::reduce_scatter, GroupRole::edp, shard.expert_params * grad_reduce_bytes_per_param(s_));
      synced = std::max(synced, c.dp_free);
    }
    const double optimizer_s = optimizer_task(s_, l_, cal_, r).seconds;
    optimizer_seconds_.push_back(optimizer_s);
    return synced + optimizer_s;
  }

  const Scenario& s_;
  const plan::Layout& l_;
  const cost::KernelCalibration& cal_;
  PassLowering lowering_;
  platform::Topology topo_;
  std::vector<RankPricing> pricing_;
  std::map<std::pair<int, int>, double> send_s_;  // (from, to) pipeline rank -> one PP message
  std::vector<std::vector<plan::ScheduleEntry>> schedules_;
  std::vector<RankClock> clocks_;
  std::vector<std::optional<std::vector<PricedItem>>> passes_;  // per pass_id
  // What a replay did, relative to its start; kUntouched: a stream it left as it was.
  static constexpr double kUntouched = -std::numeric_limits<double>::infinity();
  struct ReplayOutcome {
    double cursor_end_s[2] = {0, 0};
    double compute_free_s = 0, tp_free_s = 0, ep_free_s = 0, ep_start_s = 0, ep_end_s = 0;
    double gather_free_s = 0, dp_free_s = 0;  // per-block sharding's streams
    double copy_free_s = 0;                   // activation offloading's
    double compute_s = 0;
  };
  // The passes (second: -1 for none), then the compute stream, the inputs, the TP and EP streams,
  // the dispatcher's SMs, per-block sharding's gather and DP streams and the host-copy stream, in
  // nanoseconds from the start.
  using ReplayKey = std::array<long long, 12>;
  struct KeyHash {
    std::size_t operator()(const ReplayKey& k) const {
      std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the words
      for (long long v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL;
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<ReplayKey, ReplayOutcome, KeyHash> replays_;
  std::vector<Message> messages_;
  std::vector<double> last_backward_;
  std::vector<std::vector<double>> gathered_;  // per rank and chunk: its parameters are in
  std::vector<double> first_forward_, optimizer_seconds_;
};

}  // namespace

StepEstimate estimate_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal) {
  return PipelineReplay(s, l, cal).run();
}

}  // namespace moesim::workload
