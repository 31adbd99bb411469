#include "moesim/cost/kernel_model.hpp"

namespace moesim::cost {

double GemmCurve::seconds(double flop, double peak_flop_per_s) const {
  if (flop <= 0) return 0;
  return flop / (peak_flop_per_s * max_efficiency) + fixed_overhead_s;
}

namespace {

}  // namespace

OpCost op_cost(const model::Op& op, model::Pass pass, Precision precision, const GpuSpec& gpu,
               const KernelCalibration& cal) {
  OpCost c;
  const bool low = op.low_precision && precision != Precision::bf16;
  const Precision p = low ? precision : Precision::bf16;
  const double peak = gpu.peak_flop_per_s(p);
  const bool backward = pass == model::Pass::backward;
  c.kernels = backward ? 2 * op.kernels : op.kernels;
  switch (op.kind) {
    case model::OpKind::gemm:
    case model::OpKind::grouped_gemm: {
      const bool grouped = op.kind == model::OpKind::grouped_gemm;
      const GemmCurve& curve = grouped ? (low ? cal.grouped_gemm_fp8 : cal.grouped_gemm)
                                       : (low ? cal.gemm_fp8 : cal.gemm_bf16);
      // A grouped GEMM is one kernel over all groups: its fixed cost is paid once.
      const double one = op.forward_flop();
      // Backward = data gradient + weight gradient, each the forward's FLOPs.
      c.flop = backward ? 2 * one : one;
      c.gpu_seconds = backward ? 2 * curve.seconds(one, peak) : curve.seconds(one, peak);
      break;
    }
    case model::OpKind::attention: {
      // Flash attention's backward recomputes the scores: 5 matmuls against 2 forward.
      const double fwd = op.forward_flop();
      c.flop = backward ? 2.5 * fwd : fwd;
      const double eff = backward ? cal.attention_backward_efficiency : cal.attention_forward_efficiency;
      c.gpu_seconds = c.flop / (peak * eff);
      break;
    }
    case model::OpKind::memory: {
      // Backward of an element-wise kernel reads the saved input and the incoming gradient and
      // writes the outgoing gradient: about twice the forward's traffic.
      const double bytes = backward ? 2 * op.bytes : op.bytes;
      c.gpu_seconds = bytes / (gpu.hbm_bytes_per_s * cal.elementwise_bw_efficiency * op.bandwidth_scale);
      break;
    }
  }
  c.model_flop = op.model_flops ? c.flop : 0;
  return c;
}

}  // namespace moesim::cost
