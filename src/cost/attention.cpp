// Causal flash attention as the largest of its bounds.
//
// Forward: per score, QK^T and PV cost 2 (d_qk + d_v) tensor-core FLOP and softmax one
// exponential on the special-function units (MUFU.EX2); the two pipes overlap, so the slower
// one sets the time. Hopper and Blackwell are tensor-bound in BF16; Blackwell's FP8 doubles the
// tensor rate but not the SFUs, so FP8 attention is exponential-bound until Blackwell Ultra
// doubles the SFUs.
// Backward (recomputing P): 5 MMAs (2.5x the forward FLOP), one exponential per score again, and
// shared-memory traffic: every MMA streams both operands of its square tile through shared
// memory, P and dS are written there for the transposed MMAs, and the FP32 dQ partial sums go
// through it before their reduction to HBM.
#include <algorithm>

#include "attention.hpp"

namespace moesim::cost {

AttentionTime attention_time(const model::Op& op, model::Pass pass, Precision family, const GpuSpec& gpu,
                             const ArchitectureCalibration& arch) {
  AttentionTime t;
  const bool fp8 = family != Precision::bf16;
  t.clock_hz = gpu.sustained_clock_hz(family);
  const double sms = gpu.sm_count;
  const double tensor_flop_per_s = sms * gpu.tensor_flop_per_clock_per_sm(family) * t.clock_hz;
  const double exp2_per_s = sms * gpu.exp2_per_clock_per_sm * t.clock_hz * arch.exp2_efficiency;
  const double scores = op.attention_sequences * op.attention_heads * op.attention_seq_len * op.attention_seq_len / 2;
  const double forward_flop = op.forward_flop();

  const bool backward = pass == model::Pass::backward;
  t.flop = backward ? 2.5 * forward_flop : forward_flop;
  const double efficiency =
      backward ? (fp8 ? arch.attention_backward_efficiency_fp8 : arch.attention_backward_efficiency_bf16)
               : (fp8 ? arch.attention_forward_efficiency_fp8 : arch.attention_forward_efficiency_bf16);
  const double tensor_s = t.flop / (tensor_flop_per_s * efficiency);
  const double exp_s = scores / exp2_per_s;
  double smem_s = 0;
  if (backward) {
    const double b = operand_bytes(family);
    const double operand_bytes_total = t.flop * b / arch.attention_backward_tile;
    const double p_and_ds_bytes = scores * 2 * b;
    const double dq_partial_bytes = scores * 4.0 * op.attention_qk_dim / arch.attention_backward_tile;
    smem_s = (operand_bytes_total + p_and_ds_bytes + dq_partial_bytes) /
             (sms * gpu.smem_bytes_per_clock_per_sm * t.clock_hz);
  }
  const double bound_s = std::max({tensor_s, exp_s, smem_s});
  // An older cuDNN than the calibrated one (the stack's), as measured at DeepSeek-V3's shape.
  const double library_ratio =
      fp8 ? 1.0 : backward ? arch.attention_backward_time_ratio_bf16 : arch.attention_forward_time_ratio_bf16;
  t.seconds = bound_s * library_ratio;
  t.bound = bound_s == tensor_s ? Bound::tensor : bound_s == exp_s ? Bound::exponential : Bound::shared_memory;
  return t;
}

}  // namespace moesim::cost
