#include <fmt/format.h>

#include "schema.hpp"

namespace moesim::config {

void describe_gpu(Reader& r, GpuSpec& g) {
  r.text(key("name", "display name, e.g. \"GB300\""), g.name);
  r.number(key("bf16_dense_tflops", "dense BF16 tensor-core peak (without 2:4 sparsity)")
               .in("TFLOP/s", 1e12).at_least(1).at_most(1e5),
           g.bf16_flop_per_s);
  r.number(key("fp8_dense_tflops", "dense FP8 tensor-core peak, also used for MXFP8; 0 = no FP8 tensor cores")
               .in("TFLOP/s", 1e12).at_least(1).at_most(1e5).or_exactly(0),
           g.fp8_flop_per_s);
  r.number(key("fp4_dense_tflops", "dense FP4 tensor-core peak; 0 = no FP4 tensor cores")
               .in("TFLOP/s", 1e12).at_least(1).at_most(1e5).or_exactly(0),
           g.fp4_flop_per_s);
  r.number(key("hbm_gbytes", "HBM capacity as the device reports it (NVML's total; Hopper's '80 GB' is 80 GiB, "
                             "85.52 GB)")
               .in("GB", 1e9)
               .at_least(1)
               .at_most(1e5),
           g.hbm_bytes);
  r.number(key("hbm_usable_gbytes", "HBM that training can allocate (capacity less driver and context reserve)")
               .in("GB", 1e9).at_least(1).at_most(1e5),
           g.hbm_usable_bytes);
  r.number(key("hbm_tbytes_per_s", "peak HBM bandwidth").in("TB/s", 1e12).at_least(0.1).at_most(1000),
           g.hbm_bytes_per_s);
  r.integer(key("sm_count", "streaming multiprocessors enabled on the product").at_least(1).at_most(4096), g.sm_count);
  r.number(key("tdp_watts", "board power limit (TDP); what a tensor-core-bound GPU draws").in("W").at_least(10).at_most(1e5),
           g.tdp_w);
  r.number(key("idle_watts", "power with no kernel running (pipeline bubble, waiting for the host)")
               .in("W")
               .at_least(1)
               .at_most(1e5),
           g.idle_w);
  r.number(key("communication_watts", "power while only communication kernels and links are busy")
               .in("W")
               .at_least(1)
               .at_most(1e5),
           g.communication_w);
  r.choice(key("architecture", "selects the kernel software efficiencies in configs/calibration/kernels.json"),
           g.architecture, {"hopper", "blackwell", "blackwell_ultra"});
  r.object(key("tensor_flops_per_clock_per_sm", "dense tensor-core FLOP per SM per clock, per format"),
           [&](Reader& t) {
             t.number(key("bf16", "BF16").at_least(1).at_most(1e6), g.tensor_flop_per_clock_per_sm_bf16);
             t.number(key("fp8", "FP8 (every FP8 flavour); 0 = none").at_least(1).at_most(1e6).or_exactly(0),
                      g.tensor_flop_per_clock_per_sm_fp8);
             t.number(key("fp4", "NVFP4; 0 = none").at_least(1).at_most(1e6).or_exactly(0),
                      g.tensor_flop_per_clock_per_sm_fp4);
           });
  r.number(key("exp2_per_clock_per_sm", "exponentials (MUFU.EX2) per SM per clock on the special-function units")
               .at_least(1)
               .at_most(1e4),
           g.exp2_per_clock_per_sm);
  r.number(key("smem_bytes_per_clock_per_sm", "shared-memory bandwidth per SM per clock, in bytes").at_least(1).at_most(1e5),
           g.smem_bytes_per_clock_per_sm);
  r.object(key("sustained_clock_mhz",
               "SM clock a large GEMM sustains at the power limit, per tensor-core format (below the boost clock "
               "the datasheet peak assumes)"),
           [&](Reader& c) {
             c.number(key("bf16", "BF16 GEMMs").in("MHz", 1e6).at_least(1).at_most(1e4), g.sustained_clock_hz_bf16);
             c.number(key("fp8", "FP8 GEMMs; 0 = none").in("MHz", 1e6).at_least(1).at_most(1e4).or_exactly(0),
                      g.sustained_clock_hz_fp8);
             c.number(key("fp4", "NVFP4 GEMMs; 0 = none").in("MHz", 1e6).at_least(1).at_most(1e4).or_exactly(0),
                      g.sustained_clock_hz_fp4);
           });
  r.sources(sources_key(), g.sources);

  const std::pair<const char*, Precision> formats[] = {
      {"bf16", Precision::bf16}, {"fp8", Precision::fp8}, {"fp4", Precision::nvfp4}};
  for (const auto& [format, p] : formats) {
    const std::string name = format;
    const bool has_peak = g.peak_flop_per_s(p) > 0;
    r.rule("sustained_clock_mhz." + name, (g.sustained_flop_per_s(p) > 0) == has_peak,
           "non-zero exactly for the formats with a datasheet peak (and a tensor_flops_per_clock_per_sm)");
    r.rule("sustained_clock_mhz." + name, g.sustained_flop_per_s(p) <= g.peak_flop_per_s(p) * (1 + 1e-9),
           "at most the clock of the datasheet peak: sm_count x tensor_flops_per_clock_per_sm x clock <= dense peak",
           fmt::format("{:.0f} > {:.0f} TFLOP/s", g.sustained_flop_per_s(p) / 1e12, g.peak_flop_per_s(p) / 1e12));
  }
  r.rule("communication_watts", g.idle_w <= g.communication_w && g.communication_w <= g.tdp_w,
         "between idle_watts and tdp_watts", fmt::format("{} W", g.communication_w));

  r.rule("hbm_usable_gbytes", g.hbm_usable_bytes <= g.hbm_bytes, "at most hbm_gbytes",
         fmt::format("{} GB > {} GB", g.hbm_usable_bytes / 1e9, g.hbm_bytes / 1e9));
}

}  // namespace moesim::config
