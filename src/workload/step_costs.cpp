// What a step's tasks move and cost besides the passes' own items: PP messages, the bytes per
// parameter of the data-parallel collectives, host copies, and the distributed Adam step (shared
// by the step builder and the step estimate; declared in pass_lowering.hpp).
#include <algorithm>

#include "moesim/plan/memory.hpp"
#include "pass_lowering.hpp"

namespace moesim::workload {

double host_copy_seconds(const Scenario& s, double bytes) {
  return s.system.host_link_bytes_per_s > 0 ? bytes / s.system.host_link_bytes_per_s : 0.0;
}

double pp_message_bytes(const Scenario& s, const plan::Layout& l) {
  // Sequence-parallel hidden states (or their gradients) of the micro-batch, in BF16.
  return static_cast<double>(s.training.micro_batch) * s.training.seq_len / l.cp / l.tp * s.model.hidden * kBf16Bytes;
}

double grad_reduce_bytes_per_param(const Scenario& s) {
  return s.recipe.main_grad_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
}

double param_gather_bytes_per_param(const Scenario& s) {
  return s.recipe.fp8_param_gather && s.training.precision != Precision::bf16 ? 1.0 : kBf16Bytes;
}

Task optimizer_task(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal, int pp_rank) {
  // Adam on this rank's shard: read gradient, master weight and both moments, write master,
  // moments and the BF16 parameter; plus one read of the gradients for the norm (clipping).
  const plan::ParamShard all = plan::param_shard(s, l, pp_rank);
  // (Dualpipe: the states of each stage are sharded over the data-parallel ranks of both copies.)
  const double shard = plan::sharded_params(all, l);
  const double moment = s.recipe.adam_moment_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
  const double bytes = shard * (2 * kFp32Bytes + 2 * kFp32Bytes + 4 * moment + kBf16Bytes);
  Task opt;
  opt.kind = TaskKind::compute;
  opt.stream = Stream::compute;
  opt.activity = Activity::optimizer;
  opt.phase = Phase::step;
  opt.label = "optimizer step (distributed Adam)";
  opt.gpu_seconds = bytes / (s.system.gpu.hbm_bytes_per_s * cal.of(s.system.gpu).copy_hbm_efficiency);
  // Multi-tensor Adam launches a few kernels per parameter group of each layer.
  opt.kernels = 4 * (l.stage(pp_rank, 0).layers + 1) * l.chunks;
  // The optimizer runs outside any CUDA graph but the full-iteration one.
  const double launch = s.recipe.cuda_graphs == "full_iteration" ? cost::graph_host_per_kernel_s(s, cal)
                                                                 : cost::eager_host_per_kernel_s(s, cal);
  opt.host_seconds = opt.kernels * launch;
  opt.seconds = std::max(opt.gpu_seconds, opt.host_seconds);
  return opt;
}

}  // namespace moesim::workload
