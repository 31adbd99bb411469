// The kernel model per op kind and pass against times computed by hand on a small made-up GPU
// (4 SMs, 1,000 FLOP per SM per clock at 1 GHz, 1 TB/s of HBM), so that every expected value
// below can be checked with a pocket calculator.
#include <catch2/catch.hpp>

#include <algorithm>

#include "moesim/cost/kernel_model.hpp"
#include "moesim/cost/section_cost.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

GpuSpec toy_gpu() {
  GpuSpec g;
  g.name = "toy";
  g.architecture = "toy";
  g.sm_count = 4;
  g.tensor_flop_per_clock_per_sm_bf16 = 1000;
  g.tensor_flop_per_clock_per_sm_fp8 = 2000;
  g.tensor_flop_per_clock_per_sm_fp4 = 4000;
  g.sustained_clock_hz_bf16 = g.sustained_clock_hz_fp8 = g.sustained_clock_hz_fp4 = 1e9;
  g.exp2_per_clock_per_sm = 16;
  g.smem_bytes_per_clock_per_sm = 1e6;  // never the bound unless a test lowers it
  g.hbm_bytes_per_s = 1e12;
  g.bf16_flop_per_s = g.fp8_flop_per_s = g.fp4_flop_per_s = 1e20;
  return g;
}

cost::KernelCalibration toy_calibration() {
  cost::ArchitectureCalibration a;
  a.tile_m = 128;
  a.tile_n = 256;
  a.k_overhead = 128;
  a.gemm_fixed_s = 2e-6;
  a.grouped_gemm_streams = 4;
  a.mainloop_efficiency = {{Precision::mxfp8, 0.5}};
  a.attention_forward_efficiency_bf16 = 0.5;
  a.attention_forward_efficiency_fp8 = 0.5;
  a.attention_backward_efficiency_bf16 = 0.25;
  a.attention_backward_efficiency_fp8 = 0.25;
  a.exp2_efficiency = 1.0;
  a.attention_backward_tile = 128;
  a.elementwise_hbm_efficiency = 0.5;
  a.copy_hbm_efficiency = 1.0;
  cost::KernelCalibration c;
  c.architectures["toy"] = a;
  return c;
}

model::Op gemm_op(double m, double k, double n, int groups = 1) {
  model::Op op;
  op.name = "gemm";
  op.kind = groups > 1 ? model::OpKind::grouped_gemm : model::OpKind::gemm;
  op.m = m;
  op.k = k;
  op.n = n;
  op.groups = groups;
  return op;
}

// One SM computes 1e12 FLOP/s on the toy GPU (1,000 FLOP per clock at 1 GHz).
constexpr double kSmFlopPerS = 1e12;

}  // namespace

TEST_CASE("a GEMM forward is its tile waves plus the fixed kernel cost", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  // 256 x 512 output in 128 x 256 tiles: 2 x 2 = 4 tiles, one per SM, one wave. A tile does
  // 2 x 128 x 256 x (1024 + 128 overhead) FLOP at 1e12 FLOP/s. The 128 x 128 tiles give 8 tiles
  // in 2 waves of half the work: the same time. Stream-K would pay 2 x 128 overhead: slower.
  const double tile_s = 2.0 * 128 * 256 * (1024 + 128) / kSmFlopPerS;
  const cost::OpCost f = cost::op_cost(gemm_op(256, 1024, 512), model::Pass::forward, Precision::bf16, gpu, cal);
  CHECK(f.gpu_seconds == Approx(tile_s + 2e-6));
  CHECK(f.flop == Approx(2.0 * 256 * 1024 * 512));
  CHECK(f.kernels == 1);
  CHECK(f.bound == cost::Bound::tensor);
  CHECK(f.clock_hz == Approx(1e9));
}

TEST_CASE("a GEMM backward is a data-gradient and a weight-gradient GEMM of their own shapes", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  // out[256, 512] = a[256, 1024] b[1024, 512].
  // Data gradient: 256 x 1024 output reduced over 512: 2 x 4 = 8 tiles of 128 x 256 in 2 waves,
  // each 2 x 128 x 256 x (512 + 128) FLOP.
  const double data_s = 2 * (2.0 * 128 * 256 * (512 + 128) / kSmFlopPerS) + 2e-6;
  // Weight gradient: 1024 x 512 output reduced over the 256 rows: 8 x 2 = 16 tiles in 4 waves.
  const double weight_s = 4 * (2.0 * 128 * 256 * (256 + 128) / kSmFlopPerS) + 2e-6;
  const cost::OpCost b = cost::op_cost(gemm_op(256, 1024, 512), model::Pass::backward, Precision::bf16, gpu, cal);
  CHECK(b.gpu_seconds == Approx(data_s + weight_s));
  CHECK(b.weight_gradient_seconds == Approx(weight_s));
  CHECK(b.flop == Approx(2 * 2.0 * 256 * 1024 * 512));
  CHECK(b.kernels == 2);
}

TEST_CASE("a GEMM with fewer tiles than SMs splits its reduction or streams it", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  // One 128 x 256 tile, K = 8192 on 4 SMs. Split-K in 4 (each >= 512 deep): one wave of
  // 2 x 128 x 256 x (2048 + 128) FLOP, then the 4 FP32 partial tiles (4 B each) are reduced at
  // 1 TB/s. Stream-K deals the 8192 K steps over the 4 SMs with two tile overheads:
  // 1/4 x 2 x 128 x 256 x (8192 + 256). The smaller wins.
  const double split_s = 2.0 * 128 * 256 * (2048 + 128) / kSmFlopPerS + 4 * 128 * 256 * 4.0 / 1e12;
  const double stream_s = 0.25 * 2.0 * 128 * 256 * (8192 + 256) / kSmFlopPerS;
  const cost::OpCost f = cost::op_cost(gemm_op(128, 8192, 256), model::Pass::forward, Precision::bf16, gpu, cal);
  CHECK(f.gpu_seconds == Approx(std::min(split_s, stream_s) + 2e-6));
}

TEST_CASE("a grouped GEMM shares the SMs among its experts and pays fixed costs per stream", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  // 8 experts of 256 x 512 (K = 1024): 8 x 4 = 32 tiles in 8 full waves; 8 kernels over 4
  // streams pay 2 fixed costs one after another.
  const double tile_s = 2.0 * 128 * 256 * (1024 + 128) / kSmFlopPerS;
  const cost::OpCost g = cost::op_cost(gemm_op(256, 1024, 512, 8), model::Pass::forward, Precision::bf16, gpu, cal);
  CHECK(g.gpu_seconds == Approx(8 * tile_s + 2 * 2e-6));
  CHECK(g.flop == Approx(8 * 2.0 * 256 * 1024 * 512));
  // More experts of fewer tokens each, same FLOP: more fixed costs and relatively more tile
  // overhead in the weight gradient (its reduction runs over each expert's tokens).
  const cost::OpCost few = cost::op_cost(gemm_op(1024, 1024, 512, 2), model::Pass::backward, Precision::bf16, gpu, cal);
  const cost::OpCost many = cost::op_cost(gemm_op(256, 1024, 512, 8), model::Pass::backward, Precision::bf16, gpu, cal);
  CHECK(many.gpu_seconds > few.gpu_seconds);
}

TEST_CASE("FP8 doubles the tensor rate and a quantisation flavour's mainloop scales it", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  const double tile_bf16_s = 2.0 * 128 * 256 * (1024 + 128) / kSmFlopPerS;
  const auto op = gemm_op(256, 1024, 512);
  CHECK(cost::op_cost(op, model::Pass::forward, Precision::fp8, gpu, cal).gpu_seconds ==
        Approx(tile_bf16_s / 2 + 2e-6));
  // mxfp8 mainloop at 0.5 of the FP8 rate: back to the BF16 time.
  CHECK(cost::op_cost(op, model::Pass::forward, Precision::mxfp8, gpu, cal).gpu_seconds ==
        Approx(tile_bf16_s + 2e-6));
  // A GEMM that stays high (the output layer) ignores the run's precision.
  model::Op high = op;
  high.low_precision = false;
  CHECK(cost::op_cost(high, model::Pass::forward, Precision::nvfp4, gpu, cal).gpu_seconds ==
        Approx(tile_bf16_s + 2e-6));
}

TEST_CASE("a GEMM whose operands cannot stream through shared memory runs at what it delivers", "[cost]") {
  GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  // 128 x 256 BF16 tiles need 2 (128 + 256) / (2 x 128 x 256) = 3/256 B per FLOP; at 1,000 FLOP
  // per clock that is 11.7 B/clk. With 5.86 B/clk of shared memory the tile runs at half rate
  // (and the 128 x 128 tile, which needs 1/64 B/FLOP, at 5.86 x 64 = 375 FLOP/clk: worse).
  gpu.smem_bytes_per_clock_per_sm = 1000 * 3.0 / 256 / 2;
  const double tile_s = 2.0 * 128 * 256 * (1024 + 128) / (kSmFlopPerS / 2);
  const cost::OpCost f = cost::op_cost(gemm_op(256, 1024, 512), model::Pass::forward, Precision::bf16, gpu, cal);
  CHECK(f.gpu_seconds == Approx(tile_s + 2e-6));
}

TEST_CASE("attention is bound by the tensor cores, the exponentials or shared memory", "[cost]") {
  GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  model::Op att;
  att.kind = model::OpKind::attention;
  att.attention_sequences = 1;
  att.attention_heads = 2;
  att.attention_seq_len = 1024;
  att.attention_qk_dim = 192;
  att.attention_v_dim = 128;
  att.low_precision = false;
  // Causal: 2 heads x 1024^2 / 2 scores, 2 x (192 + 128) FLOP each.
  const double scores = 2 * 1024.0 * 1024 / 2;
  const double flop = scores * 2 * (192 + 128);
  // Tensor: 4 SMs x 1e12 FLOP/s at 0.5 efficiency; exponentials: 4 x 16 per ns.
  const double tensor_s = flop / (4 * kSmFlopPerS * 0.5);
  const double exp_s = scores / (4 * 16 * 1e9);
  const cost::OpCost f = cost::op_cost(att, model::Pass::forward, Precision::bf16, gpu, cal);
  REQUIRE(tensor_s > exp_s);
  CHECK(f.gpu_seconds == Approx(tensor_s));
  CHECK(f.bound == cost::Bound::tensor);
  CHECK(f.flop == Approx(flop));

  // FP8 attention (fp8 run, low precision) doubles the tensor rate; with 1 exponential per SM
  // per clock softmax becomes the bound.
  gpu.exp2_per_clock_per_sm = 1;
  att.low_precision = true;
  const cost::OpCost f8 = cost::op_cost(att, model::Pass::forward, Precision::mxfp8, gpu, cal);
  CHECK(f8.gpu_seconds == Approx(scores / (4 * 1e9)));
  CHECK(f8.bound == cost::Bound::exponential);

  // Backward: 2.5x the FLOP at 0.25 efficiency, or shared memory: operands (b / tile per FLOP),
  // P and dS (2 b per score), FP32 dQ partials (4 d_qk / tile per score).
  gpu.exp2_per_clock_per_sm = 16;
  att.low_precision = false;
  const double bwd_tensor_s = 2.5 * flop / (4 * kSmFlopPerS * 0.25);
  const cost::OpCost b = cost::op_cost(att, model::Pass::backward, Precision::bf16, gpu, cal);
  CHECK(b.gpu_seconds == Approx(bwd_tensor_s));
  CHECK(b.flop == Approx(2.5 * flop));
  gpu.smem_bytes_per_clock_per_sm = 4;
  const double smem_bytes = 2.5 * flop * 2 / 128 + scores * 2 * 2 + scores * 4.0 * 192 / 128;
  const cost::OpCost bs = cost::op_cost(att, model::Pass::backward, Precision::bf16, gpu, cal);
  CHECK(bs.gpu_seconds == Approx(smem_bytes / (4 * 4 * 1e9)));
  CHECK(bs.bound == cost::Bound::shared_memory);
}

TEST_CASE("memory-bound kernels move their own bytes forward and backward", "[cost]") {
  const GpuSpec gpu = toy_gpu();
  const auto cal = toy_calibration();
  model::Shard shard;
  shard.seq_len = 1024;
  const ModelSpec m = test::record_gb300().model;
  const model::LayerProgram p = model::layer_program(m, shard, true);
  auto find = [&](const model::Section& s, const std::string& name) {
    for (const auto& op : s.ops)
      if (op.name == name) return op;
    FAIL("no op " << name);
    return model::Op{};
  };
  const double elements = 1024.0 * m.hidden;
  // RMSNorm: read + write BF16 forward; read input and gradient, write gradient backward. At 0.5
  // of 1 TB/s.
  const model::Op norm = find(p.attention, "input_norm");
  CHECK(cost::op_cost(norm, model::Pass::forward, Precision::bf16, gpu, cal).gpu_seconds ==
        Approx(elements * 4 / 0.5e12));
  CHECK(cost::op_cost(norm, model::Pass::backward, Precision::bf16, gpu, cal).gpu_seconds ==
        Approx(elements * 6 / 0.5e12));
  // A residual add's backward hands the gradient to both branches: nothing to run.
  const model::Op residual = find(p.unpermute, "moe_residual");
  CHECK(cost::op_cost(residual, model::Pass::forward, Precision::bf16, gpu, cal).gpu_seconds ==
        Approx(elements * 6 / 0.5e12));
  const cost::OpCost residual_bwd = cost::op_cost(residual, model::Pass::backward, Precision::bf16, gpu, cal);
  CHECK(residual_bwd.gpu_seconds == 0);
  CHECK(residual_bwd.kernels == 0);
}

TEST_CASE("each quantisation flavour adds its own casts", "[cost]") {
  model::Shard shard;
  shard.seq_len = 1024;
  const ModelSpec m = test::record_gb300().model;
  auto cast = [&](Precision p) {
    shard.precision = p;
    const model::LayerProgram prog = model::layer_program(m, shard, true);
    for (const auto& op : prog.attention.ops)
      if (op.name == "quantize_attention_out") return op;
    return model::Op{};
  };
  // 1024 tokens x 128 heads x 128 (v_head_dim) elements read in BF16 and written row- and
  // column-wise with their scales.
  const double e = 1024.0 * 128 * 128;
  CHECK(cast(Precision::bf16).bytes == 0);
  CHECK(cast(Precision::mxfp8).bytes == Approx(e * (2 + 2 * (1 + 1.0 / 32))));
  CHECK(cast(Precision::fp8_blockwise).bytes == Approx(e * (2 + 2 * (1 + 4.0 / 128))));
  // Per-tensor current scaling and NVFP4 need the tensor's amax first: a second read.
  const model::Op fp8 = cast(Precision::fp8);
  CHECK(fp8.bytes == Approx(e * (2 + 2 + 2 * 1.0)));
  CHECK(fp8.kernels == 2);
  CHECK(cast(Precision::nvfp4).bytes == Approx(e * (2 + 2 + 2 * (0.5 + 1.0 / 16))));
}

TEST_CASE("NVFP4 runs keep attention in BF16, FP8 recipes may quantise it", "[cost]") {
  Scenario s = test::record_gb300();
  REQUIRE(s.recipe.fp8_attention);
  s.training.precision = Precision::nvfp4;
  CHECK_FALSE(model::shard_for(s).fp8_attention);
  s.training.precision = Precision::mxfp8;
  CHECK(model::shard_for(s).fp8_attention);
}

TEST_CASE("a section's backward splits exactly into its data and weight gradients", "[cost]") {
  const Scenario s = test::record_gb300();
  const auto cal = cost::load_calibration(cost::default_calibration_file(test::configs_dir()));
  const model::LayerProgram p = model::layer_program(s.model, model::shard_for(s), true);
  const auto all = cost::section_cost(p.experts, model::Pass::backward, s, cal);
  const auto data = cost::section_cost(p.experts, model::Pass::backward, s, cal, cost::GradPart::data_only);
  const auto weight = cost::section_cost(p.experts, model::Pass::backward, s, cal, cost::GradPart::weight_only);
  CHECK(data.gpu_seconds + weight.gpu_seconds == Approx(all.gpu_seconds).epsilon(1e-9));
  CHECK(data.flop + weight.flop == Approx(all.flop));
  CHECK(weight.recompute_seconds == 0);
}

TEST_CASE("a recomputed module re-runs its forward before its backward", "[cost]") {
  Scenario s = test::record_gb300();
  const auto cal = cost::load_calibration(cost::default_calibration_file(test::configs_dir()));
  const model::LayerProgram p = model::layer_program(s.model, model::shard_for(s), true);
  s.recipe.recompute.clear();
  const auto plain = cost::section_cost(p.attention, model::Pass::backward, s, cal);
  const auto forward = cost::section_cost(p.attention, model::Pass::forward, s, cal);
  s.recipe.recompute = {"full"};
  const auto again = cost::section_cost(p.attention, model::Pass::backward, s, cal);
  CHECK(again.gpu_seconds == Approx(plain.gpu_seconds + forward.gpu_seconds));
  CHECK(again.recompute_seconds == Approx(forward.gpu_seconds));
  CHECK(again.model_flop == Approx(plain.model_flop));  // recompute is never credited
}
