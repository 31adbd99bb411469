#include "moesim/cost/kernel_model.hpp"

#include <stdexcept>

#include "attention.hpp"

namespace moesim::cost {

const char* to_string(Bound b) {
  switch (b) {
    case Bound::tensor: return "tensor";
    case Bound::exponential: return "exponential";
    case Bound::shared_memory: return "shared memory";
    case Bound::memory: return "memory";
    case Bound::launch: return "launch";
  }
  return "?";
}

const ArchitectureCalibration& KernelCalibration::of(const GpuSpec& gpu) const {
  const auto it = architectures.find(gpu.architecture);
  if (it == architectures.end())
    throw std::out_of_range("kernel calibration has no architecture \"" + gpu.architecture + "\" (GPU " + gpu.name +
                            ")");
  return it->second;
}

Precision op_precision(const model::Op& op, Precision run) {
  if (!op.low_precision || run == Precision::bf16) return Precision::bf16;
  // Low-precision attention is FP8 attention (cuDNN), whatever the GEMMs' flavour.
  if (op.kind == model::OpKind::attention) return Precision::fp8;
  return run;
}

OpCost op_cost(const model::Op& op, model::Pass pass, Precision precision, const GpuSpec& gpu,
               const KernelCalibration& cal) {
  const ArchitectureCalibration& arch = cal.of(gpu);
  const Precision p = op_precision(op, precision);
  const bool backward = pass == model::Pass::backward;
  OpCost c;
  switch (op.kind) {
    case model::OpKind::gemm:
    case model::OpKind::grouped_gemm: {
      const int groups = op.kind == model::OpKind::grouped_gemm ? op.groups : 1;
      const double one = op.forward_flop();
      if (!backward) {
        const GemmTime f = gemm_time(op.m, op.k, op.n, groups, p, gpu, arch);
        c.gpu_seconds = f.seconds;
        c.flop = one;
        c.kernels = op.kernels;
        c.bound = f.bound;
        c.clock_hz = f.clock_hz;
        break;
      }
      // out = a b with a[m, k], b[k, n]: the data gradient da = dout b^T is m x k reduced over
      // n; the weight gradient db = a^T dout is k x n reduced over the m rows (tokens).
      const GemmTime data = gemm_time(op.m, op.n, op.k, groups, p, gpu, arch);
      const GemmTime weight = gemm_time(op.k, op.m, op.n, groups, p, gpu, arch);
      c.gpu_seconds = data.seconds + weight.seconds;
      c.weight_gradient_seconds = weight.seconds;
      c.flop = 2 * one;
      c.kernels = 2 * op.kernels;
      c.bound = data.seconds >= weight.seconds ? data.bound : weight.bound;
      c.clock_hz = data.clock_hz;
      break;
    }
    case model::OpKind::attention: {
      const AttentionTime t = attention_time(op, pass, tensor_family(p), gpu, arch);
      c.gpu_seconds = t.seconds;
      c.flop = t.flop;
      c.kernels = backward ? op.backward_kernels : op.kernels;
      c.bound = t.bound;
      c.clock_hz = t.clock_hz;
      break;
    }
    case model::OpKind::memory: {
      const double bytes = backward ? op.backward_bytes : op.bytes;
      c.gpu_seconds = bytes / (gpu.hbm_bytes_per_s * arch.elementwise_hbm_efficiency * op.bandwidth_scale);
      c.kernels = backward ? op.backward_kernels : op.kernels;
      c.bound = Bound::memory;
      break;
    }
  }
  c.model_flop = op.model_flops ? c.flop : 0;
  return c;
}

}  // namespace moesim::cost
