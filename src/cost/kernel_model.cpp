#include "moesim/cost/kernel_model.hpp"

#include <cmath>

namespace moesim::cost {

double EfficiencyCurve::at(double ideal_seconds) const {
  return max_efficiency * (1.0 - std::exp(-ideal_seconds / ramp_time_s));
}

namespace {

double gemm_seconds(double flop, double peak, const EfficiencyCurve& curve) {
  if (flop <= 0) return 0;
  const double ideal = flop / peak;
  return ideal / curve.at(ideal);
}

double memory_efficiency(const model::Op& op, const KernelCalibration& cal) {
  if (op.name.find("norm") != std::string::npos) return cal.norm_bw_efficiency;
  if (op.name.find("swiglu") != std::string::npos) return cal.activation_bw_efficiency;
  return cal.copy_bw_efficiency;
}

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
      const EfficiencyCurve& curve = op.kind == model::OpKind::grouped_gemm
                                         ? cal.grouped_gemm
                                         : (low ? cal.gemm_fp8 : cal.gemm_bf16);
      // Grouped GEMMs are one kernel over all groups: the ramp applies to the whole launch.
      const double one = op.forward_flop();
      // Backward = data gradient + weight gradient, each the forward's FLOPs.
      c.flop = backward ? 2 * one : one;
      c.gpu_seconds = backward ? 2 * gemm_seconds(one, peak, curve) : gemm_seconds(one, peak, curve);
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
      c.gpu_seconds = bytes / (gpu.hbm_bytes_per_s * memory_efficiency(op, cal));
      break;
    }
  }
  c.model_flop = op.model_flops ? c.flop : 0;
  return c;
}

}  // namespace moesim::cost
