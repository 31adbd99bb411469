#pragma once
// How long operators take on a GPU, from the way the hardware runs them (docs/method.md,
// "Kernels"):
//  - GEMMs: output tiles spread over the SMs in waves; a tile takes its FLOPs (plus a
//    prologue/epilogue counted as extra K) at the SM's tensor rate and the sustained clock the
//    GPU holds at its power limit; plus a fixed time per kernel. Grouped expert GEMMs are one
//    GEMM per local expert on Transformer Engine's compute streams.
//  - Attention: the largest of three bounds: tensor-core FLOPs, exponentials on the
//    special-function units, and (backward) shared-memory traffic.
//  - Memory-bound kernels: their real bytes at the architecture's achieved HBM bandwidth.
// The per-SM hardware rates and clocks come from configs/hardware; the software efficiencies per
// architecture from configs/calibration/kernels.json. Also the host side: launch cost per kernel.
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "moesim/config/specs.hpp"
#include "moesim/model/ops.hpp"

namespace moesim::cost {

// Software efficiencies of one GPU architecture (hopper, blackwell, blackwell_ultra).
struct ArchitectureCalibration {
  // GEMM: the prologue and epilogue of an output tile cost as much as `k_overhead` more
  // reduction steps; a kernel has a fixed cost (launch latency, ramp-up, tail) besides its tiles.
  double tile_m = 128, tile_n = 256;  // largest output tile per SM (a smaller one is tried too)
  double k_overhead = 256;
  double gemm_fixed_s = 5e-6;
  // Mainloop throughput of each quantisation flavour relative to the plain BF16 / FP8 / FP4
  // kernel that defines the sustained clock (so bf16 = fp8 = 1 by construction).
  std::map<Precision, double> mainloop_efficiency;
  int grouped_gemm_streams = 4;  // Transformer Engine's compute streams for grouped GEMMs
  // Attention: fraction of the tensor-core rate the flash-attention MMAs reach when they are the
  // bound, per tensor-core family (bf16, fp8); exponentials at `exp2_efficiency` of the SFUs.
  double attention_forward_efficiency_bf16 = 0.7, attention_forward_efficiency_fp8 = 0.7;
  double attention_backward_efficiency_bf16 = 0.5, attention_backward_efficiency_fp8 = 0.5;
  double exp2_efficiency = 1.0;
  double attention_backward_tile = 128;  // square tile of the backward's MMAs (shared-memory reuse)
  // BF16 attention's time under each measured cuDNN version (major, minor) over the calibrated
  // version's, forward and backward (the calibrated version itself is listed at 1), and the
  // ratios of the run's library (use_cudnn_version()).
  std::map<std::pair<int, int>, std::pair<double, double>> cudnn_bf16_time_ratios;
  double attention_forward_time_ratio_bf16 = 1, attention_backward_time_ratio_bf16 = 1;
  double elementwise_hbm_efficiency = 0.5;  // fused element-wise kernels, fraction of HBM peak
  double copy_hbm_efficiency = 0.88;        // streaming copies (optimizer)
};

struct KernelCalibration {
  std::map<std::string, ArchitectureCalibration> architectures;
  double launch_eager_s = 9.35e-6;
  double launch_graph_s = 0.96e-6;

  // The architecture's calibration; throws std::out_of_range naming it when absent.
  const ArchitectureCalibration& of(const GpuSpec& gpu) const;
};

// Reads configs/calibration/kernels.json (strict: ConfigError on anything unexpected, and on
// any figure without an entry in its "sources").
KernelCalibration load_calibration(const std::filesystem::path& file);

// Prices attention with the stack's cuDNN (StackSpec::cudnn_version, "9.18.0"; "" = the
// calibrated one): each architecture takes the ratios of the newest measured version at or below
// it, and a version older than every measured one those of the oldest measured (an older library
// is taken to be no faster). Throws std::invalid_argument for a version that is not major.minor[...].
void use_cudnn_version(KernelCalibration& c, const std::string& version);
// The same file with some keys replaced ("architectures.hopper.gemm.fixed_us" -> value, in the
// file's units), each with its source (a calibration overlay's kernels layer, or the values
// `moesim calibrate` tries); errors name the file "as calibrated by" `by`.
KernelCalibration load_calibration(const std::filesystem::path& file, const std::map<std::string, double>& values,
                                   const std::map<std::string, std::string>& sources, const std::string& by);
std::filesystem::path default_calibration_file(const std::filesystem::path& configs_dir);

// What sets a kernel's time.
enum class Bound { tensor, exponential, shared_memory, memory, launch };
const char* to_string(Bound b);

// One GEMM kernel (out[m, n] = a[m, k] b[k, n]) of `groups` independent problems of the same
// shape (1: a plain GEMM) in `precision` (the flavour; its tensor-core family sets rate and
// clock).
struct GemmTime {
  double seconds = 0;
  double clock_hz = 0;
  Bound bound = Bound::tensor;
};
GemmTime gemm_time(double m, double k, double n, int groups, Precision precision, const GpuSpec& gpu,
                   const ArchitectureCalibration& arch);

struct OpCost {
  double gpu_seconds = 0;
  double weight_gradient_seconds = 0;  // backward GEMMs: the part that is the weight gradient
  double flop = 0;        // arithmetic FLOP executed
  double model_flop = 0;  // FLOP Megatron's convention credits
  int kernels = 0;
  Bound bound = Bound::memory;  // of the longest kernel
  double clock_hz = 0;          // SM clock of tensor-core kernels; 0 for memory-bound ones
};

// The precision an op runs in under the run's precision (its own BF16 when it stays high).
Precision op_precision(const model::Op& op, Precision run);

// Forward, or backward (GEMMs: data gradient + weight gradient; attention: flash backward) of
// one op.
OpCost op_cost(const model::Op& op, model::Pass pass, Precision precision, const GpuSpec& gpu,
               const KernelCalibration& cal);

}  // namespace moesim::cost
