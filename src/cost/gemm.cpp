// GEMM kernels from tiles, waves and the sustained clock.
//
// cuBLAS/CUTLASS kernels give each SM one output tile at a time; a tile of tm x tn takes
// 2 tm tn (K + k_overhead) FLOP at the SM's tensor rate (the overhead: filling the pipeline and
// writing the tile back), unless its operands cannot stream through shared memory fast enough
// (small tiles reuse each loaded byte less). Tiles run in waves of `sm_count`, so a GEMM with
// 1.1 waves of tiles takes two, unless the library splits the reduction (split-K, stream-K).
// It picks the tile shape and scheme that finish first. Grouped expert GEMMs are one GEMM per
// expert on Transformer Engine's compute streams: the GEMMs running at once share the SMs, and
// each stream pays its kernels' fixed costs one after another.
#include <algorithm>
#include <cmath>

#include "moesim/cost/kernel_model.hpp"

namespace moesim::cost {

namespace {

// The shallowest reduction a split-K part is given (a few pipeline stages' worth of K).
constexpr double kMinSplitDepth = 512;

struct Tile {
  double m, n;
};

// FLOP per second one SM sustains on tiles of this shape: the tensor rate, or what shared
// memory can feed when both operands stream through it (bytes per FLOP = b (tm + tn) / (2 tm tn)).
double tile_flop_per_s(const Tile& t, Precision p, const GpuSpec& gpu, double clock_hz, double mainloop) {
  const double tensor = gpu.tensor_flop_per_clock_per_sm(p) * clock_hz * mainloop;
  const double bytes_per_flop = operand_bytes(p) * (t.m + t.n) / (2 * t.m * t.n);
  const double smem = gpu.smem_bytes_per_clock_per_sm * clock_hz / bytes_per_flop;
  return std::min(tensor, smem);
}

}  // namespace

GemmTime gemm_time(double m, double k, double n, int groups, Precision precision, const GpuSpec& gpu,
                   const ArchitectureCalibration& arch) {
  GemmTime g;
  if (m <= 0 || k <= 0 || n <= 0 || groups <= 0) return g;
  const Precision family = tensor_family(precision);
  g.clock_hz = gpu.sustained_clock_hz(family);
  const auto it = arch.mainloop_efficiency.find(precision);
  const double mainloop = it == arch.mainloop_efficiency.end() ? 1.0 : it->second;

  // Grouped GEMMs: `concurrent` experts' GEMMs run at once, one per compute stream, and share
  // the SMs; the rounds of them run one after another.
  const double concurrent = std::min(groups, std::max(1, arch.grouped_gemm_streams));
  const double rounds = std::ceil(groups / concurrent);
  const Tile tiles[] = {{arch.tile_m, arch.tile_n}, {arch.tile_n, arch.tile_m}, {arch.tile_m, arch.tile_n / 2}};
  double round_s = INFINITY;
  for (const Tile& t : tiles) {
    const double count = concurrent * std::ceil(m / t.m) * std::ceil(n / t.n);
    const double flop_per_s = tile_flop_per_s(t, family, gpu, g.clock_hz, mainloop);
    // Fewer tiles than SMs: the library splits K over the idle SMs (split-K / stream-K) and
    // reduces the FP32 partial tiles afterwards, as long as each split keeps a useful depth.
    const double split = std::max(1.0, std::min(std::floor(gpu.sm_count / count), std::floor(k / kMinSplitDepth)));
    const double waves = std::ceil(count * split / gpu.sm_count);
    const double tile_s = 2 * t.m * t.n * (k / split + arch.k_overhead) / flop_per_s;
    const double reduce_s =
        split > 1 ? split * concurrent * m * n * 4.0 / (gpu.hbm_bytes_per_s * arch.copy_hbm_efficiency) : 0;
    round_s = std::min(round_s, waves * tile_s + reduce_s);
    // Stream-K: the tiles' K iterations dealt out evenly over the SMs, no partial wave; a tile
    // shared by two SMs pays its prologue/epilogue twice and a fix-up of its partial sums.
    const double stream_k_s = count / gpu.sm_count * 2 * t.m * t.n * (k + 2 * arch.k_overhead) / flop_per_s;
    round_s = std::min(round_s, stream_k_s);
  }
  const double compute_s = rounds * round_s;
  // A GEMM also streams its operands and output through HBM at least once.
  const double bytes = groups * ((m * k + k * n) * operand_bytes(family) + m * n * 2.0);
  const double memory_s = bytes / (gpu.hbm_bytes_per_s * arch.copy_hbm_efficiency);
  // Fixed costs: one kernel per group; each stream pays its kernels' one after another.
  const double fixed_s = rounds * arch.gemm_fixed_s;

  const double body_s = std::max(compute_s, memory_s);
  g.seconds = body_s + fixed_s;
  g.bound = fixed_s > body_s ? Bound::launch : memory_s > compute_s ? Bound::memory : Bound::tensor;
  return g;
}

}  // namespace moesim::cost
