// Memory per GPU, one hand-computed case per kind (uniform dense model: 2 Llama-405B layers
// per stage, vocabulary of 8, BF16, pp 2, 4 micro-batches, dp 1).
#include <catch2/catch.hpp>

#include "moesim/plan/memory.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {
constexpr double kLayerParams = 570425344.0 + 2617245696.0 + 32768.0;  // attention + FFN + 2 norms
constexpr double kStage0Params = 2 * kLayerParams + 8 * 16384.0;         // + embedding
}  // namespace

TEST_CASE("Parameters per stage count layers, embedding and head", "[plan][memory]") {
  const Scenario s = test::uniform_dense(2, 4);
  const plan::Layout l = plan::make_layout(s);
  CHECK(plan::param_shard(s, l, 0).dense_params == kStage0Params);
  CHECK(plan::param_shard(s, l, 1).dense_params == 2 * kLayerParams + 8 * 16384.0 + 16384.0);
  CHECK(plan::param_shard(s, l, 0).expert_params == 0);
}

TEST_CASE("Weights, gradients and optimizer states per parameter", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  const plan::Layout l = plan::make_layout(s);
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  CHECK(m.weights_bytes == 2 * kStage0Params);       // BF16
  CHECK(m.gradients_bytes == 4 * kStage0Params);     // FP32 main gradients
  CHECK(m.optimizer_bytes == 12 * kStage0Params);    // FP32 master + 2 FP32 moments, dp = 1
  s.recipe.adam_moment_dtype = "bf16";
  CHECK(plan::rank_memory(s, l, 0).optimizer_bytes == 8 * kStage0Params);
}

TEST_CASE("The distributed optimizer shards its states over DP", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  s.gpus = 8;  // dp 4
  s.training.global_batch = 16;
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp == 4);
  CHECK(plan::rank_memory(s, l, 0).optimizer_bytes == 12 * kStage0Params / 4);
}

TEST_CASE("Activations of one dense layer, nothing recomputed", "[plan][memory]") {
  const Scenario s = test::uniform_dense(2, 4);
  // norms 2 x T h 2B, qkv and o_proj inputs, pre-MLP norm, gate_up input: 5 x 134,217,728;
  // flash attention q, k, v, out + LSE: 524,288 rows x 1028 B; SwiGLU input T x 2F x 2B;
  // down-projection input T x F x 2B.
  CHECK(plan::layer_activation_bytes(s, false) ==
        5 * 134217728.0 + 524288.0 * 1028 + 872415232.0 + 436207616.0);
}

TEST_CASE("Activations with full recompute keep one input per layer", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  s.recipe.recompute = {"full"};
  CHECK(plan::layer_activation_bytes(s, false) == 4096.0 * 16384 * 2);
  const plan::Layout l = plan::make_layout(s);
  // 1F1B: pipeline rank 0 holds pp - 0 = 2 micro-batches of its 2 layers.
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  CHECK(m.inflight_chunks == 2);
  CHECK(m.activations_bytes == 2 * 2 * 4096.0 * 16384 * 2);
}

TEST_CASE("Selective recompute of the MLP saves its activations", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  const double all = plan::layer_activation_bytes(s, false);
  s.recipe.recompute = {"mlp"};
  // gate_up input, SwiGLU input and down input are dropped; the module input is kept.
  CHECK(plan::layer_activation_bytes(s, false) ==
        all - (134217728.0 + 872415232.0 + 436207616.0) + 134217728.0);
}

TEST_CASE("In-flight micro-batches follow the schedule", "[plan][memory]") {
  Scenario s = test::uniform_dense(4, 8, 2);
  const plan::Layout l = plan::make_layout(s);
  CHECK(plan::inflight_chunks(l, 0) == (4 - 0 - 1) * 2 + (2 - 1) * 4 + 1);
  CHECK(plan::inflight_chunks(l, 3) == (2 - 1) * 4 + 1);
  const plan::Layout flat = plan::make_layout(test::uniform_dense(4, 8));
  CHECK(plan::inflight_chunks(flat, 0) == 4);
  CHECK(plan::inflight_chunks(flat, 3) == 1);
}

TEST_CASE("Buffers: runtime workspaces, plus EP staging on MoE models", "[plan][memory]") {
  const Scenario dense = test::uniform_dense(2, 4);
  const plan::Layout ld = plan::make_layout(dense);
  CHECK(plan::rank_memory(dense, ld, 0).buffers_bytes == 3e9);
  const Scenario moe = test::record_gb300();
  const plan::Layout lm = plan::make_layout(moe);
  CHECK(plan::rank_memory(moe, lm, 0).buffers_bytes == 3e9 + 2 * 4096.0 * 8 * 7168 * 2);
}

TEST_CASE("The published GB300 record layout fits in 279 GB", "[plan][memory]") {
  const Scenario s = test::record_gb300();
  const plan::Layout l = plan::make_layout(s);
  for (const auto& m : plan::memory_per_stage(s, l)) {
    INFO("pp rank " << m.pp_rank << ": " << m.total_bytes() / 1e9 << " GB");
    CHECK(m.fits());
  }
}

TEST_CASE("Memory grows with the micro-batch size", "[plan][memory]") {
  Scenario s = test::record_gb300();
  const plan::Layout l1 = plan::make_layout(s);
  s.training.micro_batch = 2;
  const plan::Layout l2 = plan::make_layout(s);
  CHECK(plan::rank_memory(s, l2, 0).total_bytes() > plan::rank_memory(test::record_gb300(), l1, 0).total_bytes());
}
