#pragma once
// How long operators take on a GPU: a roofline whose efficiency depends on the kernel's size
// and precision, with the curves fitted to the H200 measurements (configs/calibration/) and
// carried to other GPUs by their peaks. Also the host side: launch cost per kernel.
#include <filesystem>
#include <string>

#include "moesim/config/specs.hpp"
#include "moesim/model/ops.hpp"

namespace moesim::cost {

// seconds = FLOP / (peak * max_efficiency) + fixed_overhead: a sustained throughput and a fixed
// cost per kernel (launch latency, prologue, the last partial wave) that small kernels feel most.
struct GemmCurve {
  double max_efficiency = 0.7;
  double fixed_overhead_s = 14e-6;
  double seconds(double flop, double peak_flop_per_s) const;
};

struct KernelCalibration {
  GemmCurve gemm_bf16, gemm_fp8, grouped_gemm, grouped_gemm_fp8;
  double attention_forward_efficiency = 0.6;
  double attention_backward_efficiency = 0.4;
  double elementwise_bw_efficiency = 0.5;  // fused element-wise kernels, fraction of HBM peak
  double copy_bw_efficiency = 0.88;
  double launch_eager_s = 9.35e-6;
  double launch_graph_s = 0.96e-6;
};

// Reads configs/calibration/<name>.json (strict: ConfigError on anything unexpected).
KernelCalibration load_calibration(const std::filesystem::path& file);

struct OpCost {
  double gpu_seconds = 0;
  double flop = 0;        // arithmetic FLOP executed (recompute included)
  double model_flop = 0;  // FLOP Megatron's convention credits
  int kernels = 0;
};

// Forward or backward (data + weight gradient; 2.5x forward for flash attention) of one op.
OpCost op_cost(const model::Op& op, model::Pass pass, Precision precision, const GpuSpec& gpu,
               const KernelCalibration& cal);

}  // namespace moesim::cost
