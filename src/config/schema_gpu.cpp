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
  r.number(key("hbm_gbytes", "HBM capacity as the vendor states it").in("GB", 1e9).at_least(1).at_most(1e5),
           g.hbm_bytes);
  r.number(key("hbm_usable_gbytes", "HBM that training can allocate (capacity less driver and context reserve)")
               .in("GB", 1e9).at_least(1).at_most(1e5),
           g.hbm_usable_bytes);
  r.number(key("hbm_tbytes_per_s", "peak HBM bandwidth").in("TB/s", 1e12).at_least(0.1).at_most(1000),
           g.hbm_bytes_per_s);
  r.integer(key("sm_count", "streaming multiprocessors enabled on the product").at_least(1).at_most(4096), g.sm_count);
  r.number(key("tdp_watts", "board power limit (TDP)").in("W").at_least(10).at_most(1e5), g.tdp_w);
  r.sources(sources_key(), g.sources);

  r.rule("hbm_usable_gbytes", g.hbm_usable_bytes <= g.hbm_bytes, "at most hbm_gbytes",
         fmt::format("{} GB > {} GB", g.hbm_usable_bytes / 1e9, g.hbm_bytes / 1e9));
}

}  // namespace moesim::config
