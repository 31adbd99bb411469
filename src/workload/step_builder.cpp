// Placing the lowered passes of a step on streams, in schedule order.
#include "moesim/workload/step_builder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "moesim/model/flops.hpp"
#include "moesim/plan/memory.hpp"
#include "pass_lowering.hpp"

namespace moesim::workload {

namespace {

constexpr double kBf16Bytes = 2.0;
constexpr double kFp32Bytes = 4.0;

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

// A pass being emitted, possibly interleaved with another one (EP overlap).
struct PassCursor {
  std::vector<PassItem> items;
  size_t next = 0;
  int last_task = -1;           // the task the pass's next item depends on
  int last_compute = -1;
  MessageKey wait;              // message the first compute waits for
  std::vector<std::int32_t> first_deps;  // e.g. the parameter all-gather of its chunk
  Phase phase = Phase::forward;
  int microbatch = 0, chunk = 0;
  bool done() const { return next >= items.size(); }
};

class StepEmitter {
 public:
  StepEmitter(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal,
              const PassLowering& lowering, int pp_rank, RankProgram& prog)
      : s_(s), l_(l), cal_(cal), lowering_(lowering), r_(pp_rank), em_(prog) {}

  void emit() {
    emit_param_gathers();
    const auto schedule = pipeline_schedule(l_, r_);
    last_backward_.assign(l_.vpp, -1);
    for (size_t i = 0; i < schedule.size(); ++i) {
      const bool pair = s_.recipe.ep_overlap && i + 1 < schedule.size() && schedule[i + 1].paired;
      if (pair) {
        PassCursor f = cursor(schedule[i]);
        PassCursor b = cursor(schedule[i + 1]);
        // Alternate segments: each pass's communication hides behind the other's compute.
        bool f_sent = false, b_sent = false;
        while (!f_sent || !b_sent) {
          segment(f);
          // A pass's output leaves as soon as its last segment is issued, not after its partner.
          if (f.done() && !f_sent) f_sent = (finish(f), true);
          segment(b);
          if (b.done() && !b_sent) b_sent = (finish(b), true);
        }
        ++i;
      } else {
        PassCursor c = cursor(schedule[i]);
        while (!c.done()) segment(c);
        finish(c);
      }
    }
    emit_grad_sync_and_optimizer();
  }

 private:
  int stage_index(int chunk) const { return chunk * l_.pp + r_; }
  int stages() const { return l_.pp * l_.vpp; }
  MessageKey key(Phase dir, int mb, int stage) const {
    return MessageKey{((dir == Phase::forward ? 0 : 1) * l_.microbatches + mb) * stages() + stage};
  }

  PassCursor cursor(const ScheduleEntry& e) {
    PassCursor c;
    c.items = lowering_.lower(r_, e.chunk, e.phase);
    if (c.items.empty()) {
      PassItem idle;
      idle.label = "empty stage";
      c.items.push_back(idle);
    }
    c.phase = e.phase;
    c.microbatch = e.microbatch;
    c.chunk = e.chunk;
    const int v = stage_index(e.chunk);
    if (e.phase == Phase::forward && v > 0) c.wait = key(Phase::forward, e.microbatch, v);
    if (e.phase == Phase::backward && v < stages() - 1) c.wait = key(Phase::backward, e.microbatch, v);
    if (e.phase == Phase::forward && param_gather_[e.chunk] >= 0)
      c.first_deps.push_back(param_gather_[e.chunk]);
    return c;
  }

  Task base(const PassCursor& c, const PassItem& item) const {
    Task t;
    t.phase = c.phase;
    t.microbatch = c.microbatch;
    t.chunk = static_cast<std::int16_t>(c.chunk);
    t.label = fmt::format("mb {} chunk {} {}", c.microbatch, c.chunk, item.label);
    return t;
  }

  Task compute_task(const PassCursor& c, const PassItem& item) const {
    Task t = base(c, item);
    t.kind = TaskKind::compute;
    t.stream = Stream::compute;
    t.activity = Activity::compute;
    t.seconds = item.cost.pipelined_seconds;
    t.gpu_seconds = item.cost.gpu_seconds;
    t.flop = item.cost.flop;
    t.model_flop = item.cost.model_flop;
    t.kernels = item.cost.kernels;
    t.recompute_seconds = item.cost.recompute_seconds;
    return t;
  }

  // Emits the pass's items up to and including its next communication.
  void segment(PassCursor& c) {
    while (!c.done()) {
      const PassItem& item = c.items[c.next++];
      Task t = item.is_comm ? base(c, item) : compute_task(c, item);
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
      if (item.group == GroupRole::ep && s_.system.gpu.sm_count > 0)
        t.sm_fraction = static_cast<double>(s_.recipe.dispatcher_sms) / s_.system.gpu.sm_count;
      if (c.last_task >= 0) t.deps.push_back(c.last_task);
      else {
        t.wait_message = c.wait;
        t.deps.insert(t.deps.end(), c.first_deps.begin(), c.first_deps.end());
      }
      c.last_task = em_.add(std::move(t));
      // Keep going through compute that runs beside this communication.
      while (!c.done() && c.items[c.next].beside_previous_comm) {
        Task w = compute_task(c, c.items[c.next++]);
        if (c.last_compute >= 0) w.deps.push_back(c.last_compute);
        em_.add(std::move(w));
      }
      return;
    }
  }

  // The pass's output travels to the next (forward) or previous (backward) virtual stage.
  void finish(const PassCursor& c) {
    const int v = stage_index(c.chunk);
    const int to = c.phase == Phase::forward ? v + 1 : v - 1;
    if (c.phase == Phase::backward) last_backward_[c.chunk] = c.last_task;
    if (to < 0 || to >= stages()) return;
    Task t;
    t.kind = TaskKind::pp_send;
    t.stream = Stream::pp_send;
    t.activity = Activity::pp_comm;
    t.phase = c.phase;
    t.microbatch = c.microbatch;
    t.chunk = static_cast<std::int16_t>(c.chunk);
    t.label = fmt::format("mb {} chunk {} send {} to pp {}", c.microbatch, c.chunk,
                          c.phase == Phase::forward ? "activations" : "gradients", to % l_.pp);
    t.peer_pp_rank = static_cast<std::int16_t>(to % l_.pp);
    t.message = key(c.phase, c.microbatch, to);
    // Sequence-parallel hidden states (or their gradients) of the micro-batch, in BF16.
    t.bytes = static_cast<double>(s_.training.micro_batch) * s_.training.seq_len / l_.cp / l_.tp *
              s_.model.hidden * kBf16Bytes;
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
    param_gather_.assign(l_.vpp, -1);
    const double param_bytes = s_.recipe.fp8_param_gather && s_.training.precision != Precision::bf16
                                   ? 1.0 : kBf16Bytes;
    std::vector<std::int32_t> all;
    for (int c = 0; c < l_.vpp; ++c) {
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
      for (int c = 0; c < l_.vpp; ++c) param_gather_[c] = all.empty() ? -1 : all.back();
  }

  void emit_grad_sync_and_optimizer() {
    std::vector<std::int32_t> syncs;
    const int end_of_backward = static_cast<int>(em_.program().tasks.size()) - 1;
    // With overlap_grad_reduce a chunk's gradients are reduced as soon as its last backward
    // is done; otherwise after the whole pipeline has drained. Megatron's backward runs the
    // chunks in reverse, so the last chunk is reduced first.
    for (int c = l_.vpp - 1; c >= 0; --c) {
      const plan::ParamShard p = plan::chunk_params(s_, l_, r_, c);
      const int after = s_.recipe.overlap_grad_reduce ? last_backward_[c] : end_of_backward;
      // Gradients are reduced in the type of the gradient buffer (FP32 unless reduced in BF16).
      const double grad_bytes = s_.recipe.main_grad_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
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
    // Adam on this rank's shard: read gradient, master weight and both moments, write master,
    // moments and the BF16 parameter; plus one read of the gradients for the norm (clipping).
    const plan::ParamShard all = plan::param_shard(s_, l_, r_);
    const double shard = all.dense_params / (l_.dp * l_.cp) + all.expert_params / l_.edp;
    const double moment = s_.recipe.adam_moment_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
    const double bytes = shard * (2 * kFp32Bytes + 2 * kFp32Bytes + 4 * moment + kBf16Bytes);
    Task opt;
    opt.kind = TaskKind::compute;
    opt.stream = Stream::compute;
    opt.activity = Activity::optimizer;
    opt.phase = Phase::step;
    opt.label = "optimizer step (distributed Adam)";
    opt.gpu_seconds = bytes / (s_.system.gpu.hbm_bytes_per_s * cal_.of(s_.system.gpu).copy_hbm_efficiency);
    // Multi-tensor Adam launches a few kernels per parameter group of each layer.
    opt.kernels = 4 * (l_.stage(r_, 0).layers + 1) * l_.vpp;
    // The optimizer runs outside any CUDA graph but the full-iteration one.
    const double launch = s_.recipe.cuda_graphs == "full_iteration" ? cal_.launch_graph_s
                          : s_.stack.host_overhead_per_kernel_s > 0 ? s_.stack.host_overhead_per_kernel_s
                                                                    : cal_.launch_eager_s;
    opt.seconds = std::max(opt.gpu_seconds, opt.kernels * launch);
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
  Emitter em_;
  std::vector<int> param_gather_;
  std::vector<int> last_backward_;
};

}  // namespace

std::vector<long long> task_counts(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal) {
  const PassLowering lowering(s, l, cal);
  const int stages = l.pp * l.vpp;
  std::vector<long long> counts;
  for (int r = 0; r < l.pp; ++r) {
    long long per_microbatch = 0;
    int step_tasks = 1;  // the optimizer
    for (int c = 0; c < l.vpp; ++c) {
      const int v = c * l.pp + r;
      for (Phase phase : {Phase::forward, Phase::backward}) {
        const std::size_t items = lowering.lower(r, c, phase).size();
        per_microbatch += static_cast<long long>(std::max<std::size_t>(items, 1));  // an empty pass is one idle task
      }
      per_microbatch += (v + 1 < stages ? 1 : 0) + (v > 0 ? 1 : 0);  // the passes' sends onwards
      const plan::ParamShard p = plan::chunk_params(s, l, r, c);
      const int dense = l.dp * l.cp > 1 && p.dense_params > 0 ? 1 : 0;
      const int expert = l.edp > 1 && p.expert_params > 0 ? 1 : 0;
      step_tasks += 2 * (dense + expert);  // parameter all-gathers and gradient reduce-scatters
    }
    counts.push_back(per_microbatch * l.microbatches + step_tasks);
  }
  return counts;
}

StepProgram build_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal) {
  StepProgram step;
  step.message_count = 2 * l.microbatches * l.pp * l.vpp;
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
