// The cost model per op kind and pass: what a backward, a recompute or a split (delayed) weight
// gradient costs relative to the forward, with the FLOPs written out by hand. Times are checked
// through relations that hold whatever the kernel calibration (a square GEMM's data- and
// weight-gradient GEMMs have the forward's shape), so a recalibration cannot hide a wrong pass.
#include <catch2/catch.hpp>

#include "moesim/cost/section_cost.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

model::Op module_gemm_op(double m, double k, double n, std::string module = "mlp") {
  model::Op op;
  op.name = "gemm";
  op.kind = model::OpKind::gemm;
  op.m = m;
  op.k = k;
  op.n = n;
  op.module = std::move(module);
  return op;
}

// DeepSeek-V3's core attention for one 4096-token sequence on one GPU (128 heads, q/k 192, v 128).
model::Op attention_op() {
  model::Op op;
  op.name = "core_attention";
  op.kind = model::OpKind::attention;
  op.attention_sequences = 1;
  op.attention_seq_len = 4096;
  op.attention_heads = 128;
  op.attention_qk_dim = 192;
  op.attention_v_dim = 128;
  op.module = "core_attn";
  return op;
}

struct Fixture {
  Scenario s = test::record_gb300();
  cost::KernelCalibration cal = test::calibration(s);
  cost::OpCost cost(const model::Op& op, model::Pass pass) const {
    return cost::op_cost(op, pass, Precision::bf16, s.system.gpu, cal);
  }
};

}  // namespace

TEST_CASE("A GEMM's backward is a data- and a weight-gradient GEMM, each the forward's size", "[cost]") {
  const Fixture f;
  const model::Op square = module_gemm_op(4096, 4096, 4096);
  const auto fwd = f.cost(square, model::Pass::forward);
  const auto bwd = f.cost(square, model::Pass::backward);
  CHECK(fwd.flop == 2.0 * 4096 * 4096 * 4096);
  CHECK(bwd.flop == 4.0 * 4096 * 4096 * 4096);
  CHECK(fwd.model_flop == fwd.flop);
  CHECK(bwd.model_flop == bwd.flop);
  CHECK(bwd.kernels == 2 * fwd.kernels);
  // Square: dgrad (m x k, reduced over n) and wgrad (k x n, reduced over m) are the forward's shape.
  CHECK(bwd.gpu_seconds == Approx(2 * fwd.gpu_seconds).epsilon(1e-12));
  CHECK(fwd.gpu_seconds > 0);
  // Any shape: 2 m k n FLOP forward, twice that backward.
  const model::Op tall = module_gemm_op(16384, 7168, 2048);
  CHECK(f.cost(tall, model::Pass::forward).flop == 2.0 * 16384 * 7168 * 2048);
  CHECK(f.cost(tall, model::Pass::backward).flop == 4.0 * 16384 * 7168 * 2048);
}

TEST_CASE("A grouped GEMM counts every group's FLOPs", "[cost]") {
  const Fixture f;
  model::Op g = module_gemm_op(1024, 7168, 4096, "moe");
  g.kind = model::OpKind::grouped_gemm;
  g.groups = 8;
  CHECK(f.cost(g, model::Pass::forward).flop == 8 * 2.0 * 1024 * 7168 * 4096);
  CHECK(f.cost(g, model::Pass::backward).flop == 8 * 4.0 * 1024 * 7168 * 4096);
}

TEST_CASE("Flash attention: causal forward FLOPs by hand, backward 2.5x (five matmuls against two)", "[cost]") {
  const Fixture f;
  const model::Op a = attention_op();
  // Half the 4096 x 4096 score square, 128 heads, QK^T over 192 and PV over 128, 2 FLOP per MAC.
  const double forward = 2.0 * 128 * (4096.0 * 4096 / 2) * (192 + 128);
  const auto fwd = f.cost(a, model::Pass::forward);
  const auto bwd = f.cost(a, model::Pass::backward);
  CHECK(fwd.flop == forward);
  CHECK(bwd.flop == 2.5 * forward);
  CHECK(bwd.model_flop == bwd.flop);
  // At most the forward's efficiency: the backward takes at least 2.5x its time.
  CHECK(bwd.gpu_seconds >= 2.5 * fwd.gpu_seconds);
}

TEST_CASE("A memory-bound kernel takes its bytes at a fraction of the HBM bandwidth", "[cost]") {
  Fixture f;
  model::Op op;
  op.name = "swiglu";
  op.kind = model::OpKind::memory;
  op.bytes = 1e9;
  const double one = f.cost(op, model::Pass::forward).gpu_seconds;
  CHECK(one > op.bytes / f.s.system.gpu.hbm_bytes_per_s);  // never faster than the HBM peak
  op.bytes = 2e9;
  CHECK(f.cost(op, model::Pass::forward).gpu_seconds == Approx(2 * one).epsilon(1e-12));
  f.s.system.gpu.hbm_bytes_per_s *= 2;
  CHECK(f.cost(op, model::Pass::forward).gpu_seconds == Approx(one).epsilon(1e-12));
  CHECK(f.cost(op, model::Pass::forward).flop == 0);
}

TEST_CASE("Recompute re-runs the module's forward inside its backward, uncredited", "[cost]") {
  Fixture f;
  f.s.recipe.cuda_graphs = "none";
  model::Section sec{"dense_ffn", {module_gemm_op(4096, 7168, 18432, "mlp")}};
  f.s.recipe.recompute.clear();
  const auto fwd = cost::section_cost(sec, model::Pass::forward, f.s, f.cal);
  const auto plain = cost::section_cost(sec, model::Pass::backward, f.s, f.cal);
  f.s.recipe.recompute = {"mlp"};
  const auto again = cost::section_cost(sec, model::Pass::backward, f.s, f.cal);
  CHECK(plain.recompute_seconds == 0);
  CHECK(again.recompute_seconds == Approx(fwd.gpu_seconds).epsilon(1e-12));
  CHECK(again.gpu_seconds == Approx(plain.gpu_seconds + fwd.gpu_seconds).epsilon(1e-12));
  CHECK(again.flop == Approx(2.0 * 4096 * 7168 * 18432 * 3).epsilon(1e-12));  // forward + dgrad + wgrad
  CHECK(again.model_flop == plain.model_flop);  // Megatron credits no recompute
  CHECK(again.kernels == plain.kernels + fwd.kernels);
  // Another module's recompute leaves this section alone.
  f.s.recipe.recompute = {"moe_act"};
  CHECK(cost::section_cost(sec, model::Pass::backward, f.s, f.cal).gpu_seconds == plain.gpu_seconds);
}

TEST_CASE("Delayed weight gradients split a backward into two halves that add up", "[cost]") {
  Fixture f;
  f.s.recipe.cuda_graphs = "none";
  f.s.recipe.recompute.clear();
  model::Section sec{"experts", {module_gemm_op(4096, 4096, 4096, "moe")}};
  const auto all = cost::section_cost(sec, model::Pass::backward, f.s, f.cal, cost::GradPart::all);
  const auto data = cost::section_cost(sec, model::Pass::backward, f.s, f.cal, cost::GradPart::data_only);
  const auto weight = cost::section_cost(sec, model::Pass::backward, f.s, f.cal, cost::GradPart::weight_only);
  CHECK(data.flop == 2.0 * 4096 * 4096 * 4096);
  CHECK(weight.flop == 2.0 * 4096 * 4096 * 4096);
  CHECK(data.gpu_seconds == Approx(weight.gpu_seconds).epsilon(1e-12));  // square: equal GEMMs
  CHECK(data.gpu_seconds + weight.gpu_seconds == Approx(all.gpu_seconds).epsilon(1e-12));
}
