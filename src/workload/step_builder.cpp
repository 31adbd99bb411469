// Placing the lowered passes of a step on streams, in schedule order.
#include "moesim/workload/step_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "moesim/model/flops.hpp"
#include "moesim/plan/memory.hpp"
#include "pass_lowering.hpp"

namespace moesim::workload {

namespace {


// Appends tasks to one program, keeping the dependency bookkeeping of each pass.
class Emitter {
 public:
  explicit Emitter(RankProgram& prog) : prog_(prog) {}

  int add(Task t) {
    prog_.tasks.push_back(std::move(t));
    return static_cast<int>(prog_.tasks.size()) - 1;
  }
  RankProgram& program() { return prog_; }

 private:
  RankProgram& prog_;
};

// A pass being emitted, possibly interleaved with another one (F&B overlap).
struct PassCursor {
  std::vector<PassItem> items;
  size_t next = 0;
  int last_task = -1;           // the task the pass's next item depends on
  int last_compute = -1;
  MessageKey wait;              // message from another rank the first task waits for
  std::vector<std::int32_t> first_deps;  // e.g. the parameter all-gather of its chunk
  plan::Pass pass = plan::Pass::forward;
  int microbatch = 0, chunk = 0;
  std::map<int, std::vector<std::int32_t>> block_inputs;  // per block: gathers and reloads its first task waits for
  bool done() const { return next >= items.size(); }
};

Phase phase_of(plan::Pass p) {
  switch (p) {
    case plan::Pass::forward: return Phase::forward;
    case plan::Pass::backward: return Phase::backward;
    case plan::Pass::input_grad: return Phase::input_grad;
    case plan::Pass::weight_grad: return Phase::weight_grad;
  }
  return Phase::step;
}

// One letter per pass, as the schedules' papers draw them.
const char* letter(plan::Pass p) {
  switch (p) {
    case plan::Pass::forward: return "F";
    case plan::Pass::backward: return "BW";
    case plan::Pass::input_grad: return "B";
    case plan::Pass::weight_grad: return "W";
  }
  return "?";
}

// The virtual stage whose output a schedule entry's pass takes as input (the previous stage's
// activations for a forward, the next stage's gradients for a backward or B), -1 for none.
int input_stage(const plan::Layout& l, int pp_rank, const plan::ScheduleEntry& e) {
  const int v = l.stage_index(pp_rank, e.chunk);
  if (e.pass == plan::Pass::forward) return v > 0 ? v - 1 : -1;
  const bool needs_gradient = e.pass == plan::Pass::backward || e.pass == plan::Pass::input_grad;
  return needs_gradient && v < l.virtual_stages() - 1 ? v + 1 : -1;
}

class StepEmitter {
 public:
  StepEmitter(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal,
              const PassLowering& lowering, int pp_rank, RankProgram& prog)
      : s_(s), l_(l), cal_(cal), lowering_(lowering), r_(pp_rank), em_(prog) {}

  void emit() {
    emit_param_gathers();
    const auto schedule = plan::pipeline_schedule(l_, r_);
    last_gradient_.assign(l_.chunks, -1);
    forward_end_.assign(static_cast<size_t>(l_.microbatches) * l_.chunks, -1);
    input_grad_end_ = forward_end_;
    local_message_.assign(static_cast<size_t>(2) * l_.microbatches * stages(), -1);
    for (size_t i = 0; i < schedule.size(); ++i) {
      if (i + 1 < schedule.size() && schedule[i + 1].paired) {
        PassCursor f = cursor(schedule[i]);
        PassCursor b = cursor(schedule[i + 1]);
        start_with_partner(f, b);
        // The stack overlaps the pair (Megatron's combined 1F1B, DualPipe's
        // overlapped_forward_backward) or runs its passes one after the other.
        if (s_.recipe.ep_overlap) {
          // Alternate segments: each pass's communication hides behind the other's compute.
          bool f_sent = false, b_sent = false;
          while (!f_sent || !b_sent) {
            segment(f);
            // A pass's output leaves as soon as its last segment is issued, not after its partner.
            if (f.done() && !f_sent) f_sent = (finish(f), true);
            segment(b);
            if (b.done() && !b_sent) b_sent = (finish(b), true);
          }
        } else {
          run(f);
          run(b);
        }
        ++i;
      } else {
        PassCursor c = cursor(schedule[i]);
        run(c);
      }
    }
    emit_grad_sync_and_optimizer();
  }

 private:
  int stages() const { return l_.virtual_stages(); }
  MessageKey key(bool gradient, int mb, int stage) const {
    return MessageKey{((gradient ? 1 : 0) * l_.microbatches + mb) * stages() + stage};
  }
  size_t pair_index(int mb, int chunk) const { return static_cast<size_t>(mb) * l_.chunks + chunk; }
  // Chunks in virtual-stage order: the order in which ranks sharing a data-parallel group (the
  // two copies of a dualpipe stage) issue its collectives.
  std::vector<int> chunks_by_stage() const {
    std::vector<int> c(l_.chunks);
    for (int i = 0; i < l_.chunks; ++i) c[i] = i;
    std::sort(c.begin(), c.end(), [&](int a, int b) { return l_.stage_index(r_, a) < l_.stage_index(r_, b); });
    return c;
  }

  void run(PassCursor& c) {
    while (!c.done()) segment(c);
    finish(c);
  }

  // An F&B step starts once both passes' inputs are in: the forward's first task also waits for
  // what the backward needs, through a marker task where that is a message from another rank.
  void start_with_partner(PassCursor& f, const PassCursor& b) {
    f.first_deps.insert(f.first_deps.end(), b.first_deps.begin(), b.first_deps.end());
    if (b.wait.id < 0) return;
    PassItem marker;
    marker.label = "F&B: backward input arrived";
    Task t = base(b, marker);
    t.kind = TaskKind::compute;
    t.stream = Stream::compute;
    t.wait_message = b.wait;
    f.first_deps.push_back(em_.add(std::move(t)));
  }

  // What the pass needs before it starts: its input from the neighbouring stage (a message, or
  // a task of this rank when the neighbour is a chunk of its own), and what it builds on.
  PassCursor cursor(const plan::ScheduleEntry& e) {
    PassCursor c;
    // Every micro-batch's pass of a chunk lowers to the same items: lower each once.
    auto [lowered, fresh] = lowered_.try_emplace({e.chunk, e.pass});
    if (fresh) lowered->second = lowering_.lower(r_, e.chunk, e.pass);
    c.items = lowered->second;
    if (c.items.empty()) {
      PassItem idle;
      idle.label = "empty stage";
      c.items.push_back(idle);
    }
    c.pass = e.pass;
    c.microbatch = e.microbatch;
    c.chunk = e.chunk;
    const int v = l_.stage_index(r_, e.chunk);
    const bool forward = e.pass == plan::Pass::forward;
    const bool needs_gradient = e.pass == plan::Pass::backward || e.pass == plan::Pass::input_grad;
    const int from = input_stage(l_, r_, e);
    if (from >= 0) {
      const MessageKey k = key(!forward, e.microbatch, v);
      if (l_.holder(from, e.microbatch).pp_rank == r_) {
        const int producer = local_message_[k.id];
        if (producer < 0) throw std::logic_error("schedule runs a pass before its input on the same rank");
        c.first_deps.push_back(producer);
      } else {
        c.wait = k;
      }
    }
    const size_t pair = pair_index(e.microbatch, e.chunk);
    if (forward && param_gather_[e.chunk] >= 0) c.first_deps.push_back(param_gather_[e.chunk]);
    // A backward needs what its own forward saved; a W the output gradients its B received.
    if (needs_gradient && forward_end_[pair] >= 0) c.first_deps.push_back(forward_end_[pair]);
    if (e.pass == plan::Pass::weight_grad && input_grad_end_[pair] >= 0) c.first_deps.push_back(input_grad_end_[pair]);
    return c;
  }

  Task base(const PassCursor& c, const PassItem& item) const {
    Task t;
    t.phase = phase_of(c.pass);
    t.microbatch = c.microbatch;
    t.chunk = static_cast<std::int16_t>(c.chunk);
    t.label = fmt::format("mb {} chunk {} {} {}", c.microbatch, c.chunk, letter(c.pass), item.label);
    return t;
  }
  Task compute_task(const PassCursor& c, const PassItem& item) const {
    Task t = base(c, item);
    t.kind = TaskKind::compute;
    t.stream = Stream::compute;
    t.activity = Activity::compute;
    t.seconds = item.cost.pipelined_seconds;
    t.gpu_seconds = item.cost.gpu_seconds;
    t.host_seconds = item.cost.host_seconds;
    t.flop = item.cost.flop;
    t.model_flop = item.cost.model_flop;
    t.kernels = item.cost.kernels;
    t.recompute_seconds = item.cost.recompute_seconds;
    t.layer = static_cast<std::int16_t>(item.layer);
    t.routed = item.routed;
    return t;
  }

  // A block's first task waits for the block's parameters (per-block sharding).
  static void wait_for_block(PassCursor& c, const PassItem& item, Task& t) {
    const auto it = c.block_inputs.find(item.block);
    if (it == c.block_inputs.end()) return;
    t.deps.insert(t.deps.end(), it->second.begin(), it->second.end());
    c.block_inputs.erase(it);
  }

  // A block's task beside the pass (PassItem::BlockTask), issued once the pass's work so far is:
  // its parameter all-gather (one block ahead) on the gather stream, its gradient reduce-scatter
  // on the DP stream, its activations' copies to or from host memory on the copy stream. The
  // pass waits for none of them: its block's first task waits for the gathers and reloads.
  void block_task(PassCursor& c, const PassItem& item) {
    using BlockTask = PassItem::BlockTask;
    const bool needed = item.block_task == BlockTask::gather || item.block_task == BlockTask::reload;
    const bool copy = item.block_task == BlockTask::offload || item.block_task == BlockTask::reload;
    Task t = dp_task(fmt::format("mb {} chunk {} {} {}", c.microbatch, c.chunk, letter(c.pass), item.label),
                     item.collective, item.group, item.activity, item.bytes);
    t.stream = item.block_task == BlockTask::gather ? Stream::dp_gather : Stream::dp_comm;
    if (copy) {
      t.kind = TaskKind::host_copy;
      t.stream = Stream::host_copy;
      t.seconds = host_copy_seconds(s_, item.bytes);
    }
    t.phase = phase_of(c.pass);
    t.microbatch = c.microbatch;
    t.chunk = static_cast<std::int16_t>(c.chunk);
    if (c.last_task >= 0) {
      t.deps.push_back(c.last_task);
    } else {  // at the pass's start: once its input is in (the first block's pre-forward hook)
      t.wait_message = c.wait;
      t.deps = c.first_deps;
    }
    const int id = em_.add(std::move(t));
    if (needed) c.block_inputs[item.block].push_back(id);
    else if (item.block_task == BlockTask::reduce) block_reductions_.push_back(id);
  }

  // Emits the pass's items up to and including its next communication.
  void segment(PassCursor& c) {
    while (!c.done()) {
      const PassItem& item = c.items[c.next++];
      if (item.block_task != PassItem::BlockTask::no) {
        block_task(c, item);
        continue;
      }
      Task t = item.is_comm ? base(c, item) : compute_task(c, item);
      wait_for_block(c, item, t);
      if (!item.is_comm) {
        if (item.beside_previous_comm) {
          // Runs after the communication is issued; only its own stream waits for it.
          if (c.last_compute >= 0) t.deps.push_back(c.last_compute);
          em_.add(std::move(t));
          continue;
        }
        if (c.last_task >= 0) t.deps.push_back(c.last_task);
        if (c.last_task < 0) {
          t.wait_message = c.wait;
          t.deps.insert(t.deps.end(), c.first_deps.begin(), c.first_deps.end());
        }
        c.last_task = c.last_compute = em_.add(std::move(t));
        continue;
      }
      t.kind = TaskKind::collective;
      t.stream = item.group == GroupRole::tp ? Stream::tp_comm : Stream::ep_comm;
      t.activity = item.activity;
      t.collective = item.collective;
      t.group = item.group;
      t.bytes = item.bytes;
      t.ep_tokens = item.ep_tokens;
      t.ep_token_bytes = item.ep_token_bytes;
      t.ep_combine_kernel = item.ep_combine_kernel;
      t.layer = static_cast<std::int16_t>(item.layer);
      if (c.last_task >= 0) t.deps.push_back(c.last_task);
      else {
        t.wait_message = c.wait;
        t.deps.insert(t.deps.end(), c.first_deps.begin(), c.first_deps.end());
      }
      c.last_task = em_.add(std::move(t));
      // Keep going through compute that runs beside this communication.
      while (!c.done() && c.items[c.next].beside_previous_comm) {
        const PassItem& beside = c.items[c.next++];
        Task w = compute_task(c, beside);
        wait_for_block(c, beside, w);
        if (c.last_compute >= 0) w.deps.push_back(c.last_compute);
        em_.add(std::move(w));
      }
      return;
    }
  }

  // The pass's output travels to the next (forward) or previous (backward) virtual stage.
  void finish(const PassCursor& c) {
    const size_t pair = pair_index(c.microbatch, c.chunk);
    switch (c.pass) {
      case plan::Pass::forward: forward_end_[pair] = c.last_task; break;
      case plan::Pass::input_grad: input_grad_end_[pair] = c.last_task; break;
      case plan::Pass::backward:
      case plan::Pass::weight_grad: last_gradient_[c.chunk] = c.last_task; break;
    }
    if (c.pass == plan::Pass::weight_grad) return;  // W's results stay on the rank
    const bool forward = c.pass == plan::Pass::forward;
    const int v = l_.stage_index(r_, c.chunk);
    const int to = forward ? v + 1 : v - 1;
    if (to < 0 || to >= stages()) return;
    const MessageKey k = key(!forward, c.microbatch, to);
    const int peer = l_.holder(to, c.microbatch).pp_rank;
    if (peer == r_) {  // the next chunk is this rank's own (the bottom of a V)
      local_message_[k.id] = c.last_task;
      return;
    }
    Task t;
    t.kind = TaskKind::pp_send;
    t.stream = Stream::pp_send;
    t.activity = Activity::pp_comm;
    t.phase = phase_of(c.pass);
    t.microbatch = c.microbatch;
    t.chunk = static_cast<std::int16_t>(c.chunk);
    t.label = fmt::format("mb {} chunk {} send {} to pp {}", c.microbatch, c.chunk,
                          forward ? "activations" : "gradients", peer);
    t.peer_pp_rank = static_cast<std::int16_t>(peer);
    t.message = k;
    t.bytes = pp_message_bytes(s_, l_);
    t.deps.push_back(c.last_task);
    em_.add(std::move(t));
  }

  Task dp_task(const std::string& label, platform::CollectiveKind kind, GroupRole group,
               Activity activity, double bytes) const {
    Task t;
    t.kind = TaskKind::collective;
    t.stream = Stream::dp_comm;
    t.activity = activity;
    t.phase = Phase::step;
    t.collective = kind;
    t.group = group;
    t.bytes = bytes;
    t.label = label;
    return t;
  }

  // Distributed optimizer: each chunk's parameters are all-gathered before its first forward
  // (overlapped with earlier chunks' compute when the stack overlaps the parameter gather).
  void emit_param_gathers() {
    param_gather_.assign(l_.chunks, -1);
    if (l_.fsdp) return;  // each block gathers its own, in its passes
    const double param_bytes = param_gather_bytes_per_param(s_);
    std::vector<std::int32_t> all;
    for (int c : chunks_by_stage()) {
      const plan::ParamShard p = plan::chunk_params(s_, l_, r_, c);
      int last = -1;
      if (l_.dp * l_.cp > 1 && p.dense_params > 0)
        last = em_.add(dp_task(fmt::format("chunk {} dense parameter all-gather", c),
                               platform::CollectiveKind::all_gather, GroupRole::dp,
                               Activity::dp_param_gather, p.dense_params * param_bytes));
      if (l_.edp > 1 && p.expert_params > 0)
        last = em_.add(dp_task(fmt::format("chunk {} expert parameter all-gather", c),
                               platform::CollectiveKind::all_gather, GroupRole::edp,
                               Activity::dp_param_gather, p.expert_params * param_bytes));
      param_gather_[c] = last;
      if (last >= 0) all.push_back(last);
    }
    if (!s_.recipe.overlap_param_gather)
      for (int c = 0; c < l_.chunks; ++c) param_gather_[c] = all.empty() ? -1 : all.back();
  }

  void emit_grad_sync_and_optimizer() {
    std::vector<std::int32_t> syncs;
    const int end_of_backward = static_cast<int>(em_.program().tasks.size()) - 1;
    // With overlap_grad_reduce a chunk's gradients are reduced as soon as its last weight
    // gradients are done; otherwise after the whole pipeline has drained. The backward runs the
    // stages in reverse, so the last stage is reduced first.
    std::vector<int> order = chunks_by_stage();
    std::reverse(order.begin(), order.end());
    if (l_.fsdp) {
      order.clear();  // each block reduced its gradients in its backward
      syncs = block_reductions_;
    }
    for (int c : order) {
      const plan::ParamShard p = plan::chunk_params(s_, l_, r_, c);
      const int after = s_.recipe.overlap_grad_reduce ? last_gradient_[c] : end_of_backward;
      const double grad_bytes = grad_reduce_bytes_per_param(s_);
      auto add = [&](GroupRole g, double params, const char* what) {
        Task t = dp_task(fmt::format("chunk {} {} gradient reduce-scatter", c, what),
                         platform::CollectiveKind::reduce_scatter, g, Activity::dp_grad_sync,
                         params * grad_bytes);
        if (after >= 0) t.deps.push_back(after);
        syncs.push_back(em_.add(std::move(t)));
      };
      if (l_.dp * l_.cp > 1 && p.dense_params > 0) add(GroupRole::dp, p.dense_params, "dense");
      if (l_.edp > 1 && p.expert_params > 0) add(GroupRole::edp, p.expert_params, "expert");
    }
    Task opt = optimizer_task(s_, l_, cal_, r_);
    opt.deps = syncs;
    if (end_of_backward >= 0) opt.deps.push_back(end_of_backward);
    em_.add(std::move(opt));
  }

 private:
  const Scenario& s_;
  const plan::Layout& l_;
  const cost::KernelCalibration& cal_;
  const PassLowering& lowering_;
  int r_;
  std::map<std::pair<int, plan::Pass>, std::vector<PassItem>> lowered_;  // per (chunk, pass)
  Emitter em_;
  std::vector<int> param_gather_;
  std::vector<int> last_gradient_;   // per chunk: the task completing its last weight gradients
  std::vector<int> forward_end_;     // per (micro-batch, chunk): its forward's last task
  std::vector<int> input_grad_end_;  // per (micro-batch, chunk): its B's last task
  std::vector<int> local_message_;   // per message produced for this rank itself: its task
  std::vector<std::int32_t> block_reductions_;  // per-block sharding: every gradient reduce-scatter
};

}  // namespace

std::vector<long long> task_counts(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal) {
  const PassLowering lowering(s, l, cal);
  const int stages = l.virtual_stages();
  std::vector<long long> counts;
  for (int r = 0; r < l.pp; ++r) {
    long long tasks = 1;  // the optimizer
    for (int c = 0; c < l.chunks && !l.fsdp; ++c) {  // (per-block sharding: items of the passes)
      const plan::ParamShard p = plan::chunk_params(s, l, r, c);
      const int dense = l.dp * l.cp > 1 && p.dense_params > 0 ? 1 : 0;
      const int expert = l.edp > 1 && p.expert_params > 0 ? 1 : 0;
      tasks += 2 * (dense + expert);  // parameter all-gathers and gradient reduce-scatters
    }
    // Per schedule entry: its pass's items (an empty pass is one idle task), its send onwards
    // unless the next stage is its own rank's, and an F&B step's marker where the paired pass
    // waits for a message from another rank.
    std::map<std::pair<int, plan::Pass>, long long> items;
    for (const plan::ScheduleEntry& e : plan::pipeline_schedule(l, r)) {
      auto [it, fresh] = items.try_emplace({e.chunk, e.pass}, 0);
      if (fresh) it->second = static_cast<long long>(std::max<std::size_t>(lowering.lower(r, e.chunk, e.pass).size(), 1));
      const int from = input_stage(l, r, e);
      const bool waits_for_message = from >= 0 && l.holder(from, e.microbatch).pp_rank != r;
      tasks += it->second + (e.paired && waits_for_message ? 1 : 0);
      if (e.pass == plan::Pass::weight_grad) continue;
      const int to = l.stage_index(r, e.chunk) + (e.pass == plan::Pass::forward ? 1 : -1);
      if (to >= 0 && to < stages && l.holder(to, e.microbatch).pp_rank != r) ++tasks;
    }
    counts.push_back(tasks);
  }
  return counts;
}

void check_program(const StepProgram& program) {
  // A step lasts seconds to hours; 2^62 bytes is beyond any message and still exact as uint64.
  constexpr double kMaxTask_s = 1e7, kMaxBytes = 4.6e18;
  for (const RankProgram& rank : program.stages)
    for (const Task& t : rank.tasks) {
      const auto bad = [&](const char* what, double v, const std::string& range) {
        throw std::invalid_argument(fmt::format("pipeline rank {}, task \"{}\": {} is {}; expected {}", rank.pp_rank,
                                                t.label, what, v, range));
      };
      if (!(std::isfinite(t.seconds) && t.seconds >= 0 && t.seconds <= kMaxTask_s))
        bad("its duration (s)", t.seconds, fmt::format("a finite time in [0, {:g}] s", kMaxTask_s));
      if (!(std::isfinite(t.bytes) && t.bytes >= 0 && t.bytes <= kMaxBytes))
        bad("its size (bytes)", t.bytes, fmt::format("a finite size in [0, {:g}] bytes", kMaxBytes));
      if (!(std::isfinite(t.ep_tokens) && t.ep_tokens >= 0 && t.ep_tokens * t.ep_token_bytes <= kMaxBytes))
        bad("its routed tokens", t.ep_tokens, fmt::format("a finite count whose copies fit in {:g} bytes", kMaxBytes));
      if (!(std::isfinite(t.ep_token_bytes) && t.ep_token_bytes >= 0 && t.ep_token_bytes <= kMaxBytes))
        bad("its token size (bytes)", t.ep_token_bytes, fmt::format("a finite size in [0, {:g}] bytes", kMaxBytes));
    }
}

StepProgram build_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal) {
  StepProgram step;
  step.message_count = 2 * l.microbatches * l.virtual_stages();
  const model::FlopsPerToken f = model::model_flops_per_token(s.model, s.training.seq_len, s.training.mtp_layers);
  const double tokens = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  step.model_flop_per_gpu = f.total() * tokens / s.gpus;
  PassLowering lowering(s, l, cal);
  for (int r = 0; r < l.pp; ++r) {
    RankProgram prog;
    prog.pp_rank = r;
    StepEmitter(s, l, cal, lowering, r, prog).emit();
    step.stages.push_back(std::move(prog));
  }
  return step;
}

}  // namespace moesim::workload
