// Memory per GPU, each expected value derived by hand here from the model's dimensions and
// from what Megatron-Core / Transformer Engine keep (docs/method.md, "Memory"), never from the
// implementation's own formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "moesim/config/loader.hpp"
#include "moesim/driver/fit.hpp"
#include "moesim/driver/validate.hpp"
#include "moesim/plan/memory.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

// Llama-3.1-405B: h 16384, 128 query heads and 8 KV heads of 128, SwiGLU 53248.
constexpr double kH = 16384, kHeads = 128, kKvHeads = 8, kHeadDim = 128, kFfn = 53248;
constexpr double kLayerParams = 570425344.0 + 2617245696.0 + 32768.0;  // attention + FFN + 2 norms
constexpr double kStage0Params = 2 * kLayerParams + 8 * 16384.0;         // + embedding

double bytes_of(const std::vector<plan::SavedTensor>& tensors, plan::TensorKind kind) {
  double b = 0;
  for (const auto& t : tensors)
    if (t.kind == kind) b += t.bytes();
  return b;
}

// DeepSeek-V3 cut to 4 layers (1 dense, 3 MoE) on 64 GB300 GPUs, PP2 (no interleaving), EP32,
// the record's stack (MXFP8, FP8 attention, FP8 parameters, BF16 gradients and moments).
Scenario tiny_deepseek() {
  Scenario s = test::small_moe(4);
  s.layout.pipeline_layout = "Ett|ttL";  // rank 0: embedding, dense layer 0, MoE layer 1
  return s;
}

// DeepSeek-V3 per-layer figures (config_671B.json).
constexpr double kDsH = 7168, kDsHeads = 128, kQLora = 1536, kKvLora = 512, kRope = 64, kNope = 128, kV = 128;
constexpr double kExperts = 256, kTopK = 8, kExpertFfn = 2048, kSharedFfn = 2048, kDenseFfn = 18432, kVocab = 129280;
constexpr double kMx = 1 + 1.0 / 32;  // MXFP8 byte + one E8M0 scale per 32 elements

}  // namespace

TEST_CASE("Parameters per stage count layers, embedding and head", "[plan][memory]") {
  const Scenario s = test::uniform_dense(2, 4);
  const plan::Layout l = plan::make_layout(s);
  CHECK(plan::param_shard(s, l, 0).dense_params == kStage0Params);
  CHECK(plan::param_shard(s, l, 1).dense_params == 2 * kLayerParams + 8 * 16384.0 + 16384.0);
  CHECK(plan::param_shard(s, l, 0).expert_params == 0);
  // Kept in BF16 by FP8 recipes: 2 norms per layer and the embedding.
  CHECK(plan::param_shard(s, l, 0).bf16_only_params == 2 * 2 * kH + 8 * kH);
}

TEST_CASE("Weights, gradients and optimizer states per parameter", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  const plan::Layout l = plan::make_layout(s);
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  CHECK(m.weights_bytes == 2 * kStage0Params);       // BF16
  CHECK(m.gradients_bytes == 4 * kStage0Params);     // FP32 gradient buffer (Megatron's default)
  CHECK(m.optimizer_bytes == 12 * kStage0Params);    // FP32 master + 2 FP32 moments, dp = 1
  s.recipe.adam_moment_dtype = "bf16";
  CHECK(plan::rank_memory(s, l, 0).optimizer_bytes == 8 * kStage0Params);
  s.recipe.main_grad_dtype = "bf16";                 // --grad-reduce-in-bf16
  CHECK(plan::rank_memory(s, l, 0).gradients_bytes == 2 * kStage0Params);
}

TEST_CASE("FP8 recipes keep row- and column-wise weight copies, beside BF16 unless parameters are FP8",
          "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  s.training.precision = Precision::mxfp8;
  const plan::Layout l = plan::make_layout(s);
  const double bf16_only = 2 * 2 * kH + 8 * kH;  // norms, embedding
  const double quantised = kStage0Params - bf16_only;
  s.recipe.fp8_param_gather = false;
  CHECK(plan::rank_memory(s, l, 0).weights_bytes == Approx(bf16_only * 2 + quantised * (2 + 2 * kMx)));
  s.recipe.fp8_param_gather = true;
  CHECK(plan::rank_memory(s, l, 0).weights_bytes == Approx(bf16_only * 2 + quantised * 2 * kMx));
  s.training.precision = Precision::fp8;  // per-tensor FP8: one byte, both layouts
  CHECK(plan::rank_memory(s, l, 0).weights_bytes == Approx(bf16_only * 2 + quantised * 2));
}

TEST_CASE("The distributed optimizer shards dense states over DP x CP", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  s.gpus = 8;  // dp 4
  s.training.global_batch = 16;
  plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp == 4);
  CHECK(plan::rank_memory(s, l, 0).optimizer_bytes == 12 * kStage0Params / 4);
  s.layout.cp = 2;  // dp 2 x cp 2: the same four shards
  l = plan::make_layout(s);
  REQUIRE(l.dp == 2);
  CHECK(plan::rank_memory(s, l, 0).optimizer_bytes == 12 * kStage0Params / 4);
}

TEST_CASE("Expert optimizer states are sharded over expert-DP, not DP", "[plan][memory]") {
  Scenario s = tiny_deepseek();
  s.layout.ep = 8;  // 32 ranks per stage: dp 32, edp 32 / 8 = 4
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp == 32);
  REQUIRE(l.edp == 4);
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 1);
  // Rank 1: MoE layers 2 and 3, 256 / 8 = 32 experts each of 3 h F.
  const double experts = 2 * (kExperts / 8) * 3 * kDsH * kExpertFfn;
  CHECK(m.params.expert_params == experts);
  const double state = 4 + 2 * 2;  // FP32 master, BF16 moments
  CHECK(m.optimizer_bytes == Approx(m.params.dense_params * state / 32 + experts * state / 4));
}

TEST_CASE("GQA attention keeps keys and values at the KV head count", "[plan][memory]") {
  const Scenario s = test::uniform_dense(2, 4);
  const double T = 4096;
  const auto tensors = plan::layer_saved_tensors(s, false);
  // q at 128 heads, k and v at 8 heads, 128 wide, BF16.
  CHECK(bytes_of(tensors, plan::TensorKind::attention_qkv) == T * (kHeads + 2 * kKvHeads) * kHeadDim * 2);
  // Output (BF16) and FP32 log-sum-exp per query head and token.
  CHECK(bytes_of(tensors, plan::TensorKind::attention_output) == T * kHeads * kHeadDim * 2 + T * kHeads * 4);
}

TEST_CASE("Activations of one dense GQA layer, nothing recomputed", "[plan][memory]") {
  const Scenario s = test::uniform_dense(2, 4);
  const double T = 4096;
  // Per token, BF16 unless stated: layer input and the normed QKV input (the fused norm keeps
  // both); q, k, v; attention output; FP32 LSE per head; MLP input and normed fc1 input; fc1
  // output 2F; fc2 input F.
  const double per_token = 2 * kH * 2 + (kHeads + 2 * kKvHeads) * kHeadDim * 2 + kHeads * kHeadDim * 2 +
                           kHeads * 4 + 2 * kH * 2 + 2 * kFfn * 2 + kFfn * 2;
  CHECK(plan::layer_activation_bytes(s, false) == T * per_token);
}

TEST_CASE("Tensor and context parallelism divide the saved tensors", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  const double T = 4096;
  s.layout.tp = 8;  // 16 query heads and 1 KV head per rank; sequence-parallel residual stream
  const auto tensors = plan::layer_saved_tensors(s, false);
  CHECK(bytes_of(tensors, plan::TensorKind::attention_qkv) == T * (kHeads / 8 + 2 * 1) * kHeadDim * 2);
  CHECK(bytes_of(tensors, plan::TensorKind::residual) == 2 * (T / 8) * kH * 2);
  // Context parallelism splits the sequence: every tensor holds half the tokens.
  Scenario cp = test::uniform_dense(2, 4);
  const double whole = plan::layer_activation_bytes(cp, false);
  cp.layout.cp = 2;
  CHECK(plan::layer_activation_bytes(cp, false) == whole / 2);
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

TEST_CASE("Recomputing the dense MLP keeps only its input", "[plan][memory]") {
  Scenario s = test::uniform_dense(2, 4);
  const double T = 4096;
  const double all = plan::layer_activation_bytes(s, false);
  s.recipe.recompute = {"mlp"};
  // fc1 input, fc1 output and fc2 input go; the MLP input is the checkpoint's and stays.
  CHECK(plan::layer_activation_bytes(s, false) == all - T * (kH * 2 + 2 * kFfn * 2 + kFfn * 2));
}

TEST_CASE("A DeepSeek-V3 MoE layer in MXFP8 with FP8 attention, by hand", "[plan][memory]") {
  const Scenario s = tiny_deepseek();
  REQUIRE(s.training.precision == Precision::mxfp8);
  REQUIRE(s.recipe.fp8_attention);
  REQUIRE(s.recipe.fused_quantization);
  REQUIRE(s.recipe.recompute.empty());
  const double T = 4096, rows = T * kTopK;
  const double attention = T * (kDsH * 2                          // layer input (input_layernorm)
                                + kDsH * kMx                      // one MXFP8 copy of the norm output
                                + kQLora * 2 + (kKvLora + kRope) * 2  // latents
                                + (kQLora + kKvLora) * kMx        // normed latents, up-projection inputs
                                + kDsHeads * (2 * (kNope + kRope) + kV) * 2 * kMx  // q, k, v: both layouts
                                + kDsHeads * kV * 2 + kDsHeads * 4);  // output, LSE
  const double moe = T * (kDsH * 2 + kDsH * 2                     // MoE input, router input (BF16)
                          + (kExperts + kTopK) * 4                // scores and probabilities
                          + kDsH * kMx + 2 * kSharedFfn * 2 + kSharedFfn * kMx)  // shared expert
                     + rows * (kDsH * kMx + 2 * kExpertFfn * 2 + kExpertFfn * kMx);  // routed experts
  CHECK(plan::layer_activation_bytes(s, true) == Approx(attention + moe).epsilon(1e-12));
}

TEST_CASE("MLA up-projection and MoE activation recompute drop what Megatron frees", "[plan][memory]") {
  Scenario s = tiny_deepseek();
  const double T = 4096, rows = T * kTopK;
  const double all = plan::layer_activation_bytes(s, true);
  s.recipe.recompute = {"mla_up_proj"};
  // q, k, v and the normed latents go; the latents are the checkpoint's inputs and stay.
  const double up = T * ((kQLora + kKvLora) * kMx + kDsHeads * (2 * (kNope + kRope) + kV) * 2 * kMx);
  CHECK(plan::layer_activation_bytes(s, true) == Approx(all - up).epsilon(1e-12));
  s.recipe.recompute = {"moe_act"};
  // The activation's output goes (fc2 then saves that BF16 output, which is freed); its input stays.
  CHECK(plan::layer_activation_bytes(s, true) == Approx(all - rows * kExpertFfn * kMx).epsilon(1e-12));
  s.training.precision = Precision::bf16;
  s.recipe.fp8_attention = false;
  const double bf16_all = [&] {
    Scenario b = s;
    b.recipe.recompute.clear();
    return plan::layer_activation_bytes(b, true);
  }();
  CHECK(plan::layer_activation_bytes(s, true) == Approx(bf16_all - rows * kExpertFfn * 2).epsilon(1e-12));
}

TEST_CASE("activation_fp8_input_store keeps SwiGLU inputs in one byte, except under the activation's recompute",
          "[plan][memory]") {
  Scenario s = tiny_deepseek();
  const double T = 4096, rows = T * kTopK;
  const double all = plan::layer_activation_bytes(s, true);
  s.recipe.activation_fp8_input_store = true;
  // fc1's outputs of the shared and the routed experts, 2F wide, go from 2 bytes to 1.
  const double saved = T * 2 * kSharedFfn + rows * 2 * kExpertFfn;
  CHECK(plan::layer_activation_bytes(s, true) == Approx(all - saved).epsilon(1e-12));
  // moe_act recompute: the routed experts' checkpoint keeps fc1's BF16 output; the shared
  // expert's activation is not recomputed and still saves its FP8 input.
  s.recipe.recompute = {"moe_act"};
  const double recomputed = plan::layer_activation_bytes(s, true);
  s.recipe.activation_fp8_input_store = false;
  CHECK(plan::layer_activation_bytes(s, true) - recomputed == Approx(T * 2 * kSharedFfn).epsilon(1e-12));
}

TEST_CASE("A DeepSeek-V3 pipeline rank by hand: weights, gradients, optimizer, activations", "[plan][memory]") {
  const Scenario s = tiny_deepseek();
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp == 32);
  REQUIRE(l.edp == 1);
  REQUIRE(l.microbatches == 2);
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 1);  // MoE layers 2, 3 and the head
  // MLA parameters in Megatron's count (latent norms included), shared expert, 2 norms, router.
  const double attention = kQLora * (kDsH + kDsHeads * (kNope + kRope) + 1) +
                           kKvLora * (kDsH + kDsHeads * (kNope + kV) + 1) + kDsH * kRope + kDsHeads * kV * kDsH;
  const double layer_bf16_only = 2 * kDsH + kDsH * kExperts;
  const double layer_dense = attention + 3 * kDsH * kSharedFfn + layer_bf16_only;
  const double head = kVocab * kDsH + kDsH;  // output layer and final norm
  const double dense = 2 * layer_dense + head;
  const double bf16_only = 2 * layer_bf16_only + head;
  const double experts = 2 * (kExperts / 32) * 3 * kDsH * kExpertFfn;
  CHECK(m.params.dense_params == dense);
  CHECK(m.params.bf16_only_params == bf16_only);
  CHECK(m.params.expert_params == experts);
  // FP8 parameters: BF16 for the unquantised ones, both MXFP8 layouts for the rest.
  CHECK(m.weights_bytes == Approx(bf16_only * 2 + (dense + experts - bf16_only) * 2 * kMx));
  CHECK(m.gradients_bytes == (dense + experts) * 2);  // BF16 gradient buffer
  CHECK(m.optimizer_bytes == Approx(dense * 8 / 32 + experts * 8 / 1));
  // Last rank of a 1F1B pipeline: one micro-batch in flight, plus the one extra warm-up forward
  // of Megatron's combined 1F1B when EP overlap is on (get_pp_rank_microbatches); each holds its
  // two layers, the head's final norm input, output-layer input (BF16) and the BF16 logits TE's
  // cross-entropy keeps.
  REQUIRE(s.recipe.ep_overlap);
  CHECK(m.inflight_chunks == 2);
  const double T = 4096;
  CHECK(m.activations_bytes ==
        Approx(2 * (2 * plan::layer_activation_bytes(s, true) + T * kDsH * 2 * 2 + T * kVocab * 2)).epsilon(1e-12));
  Scenario no_overlap = s;
  no_overlap.recipe.ep_overlap = false;
  const plan::Layout plain_layout = plan::make_layout(no_overlap);
  CHECK(plan::rank_memory(no_overlap, plain_layout, 1).inflight_chunks == 1);
  // Rank 0: two micro-batches of the dense layer 0 and MoE layer 1.
  const plan::MemoryBreakdown m0 = plan::rank_memory(s, l, 0);
  CHECK(m0.inflight_chunks == 2);
  const double dense_layer = T * (kDsH * 2 + kDsH * kMx + 2 * kDenseFfn * 2 + kDenseFfn * kMx);  // MLP part
  const double mla_part = plan::layer_activation_bytes(s, true) -
                          (T * (kDsH * 2 + kDsH * 2 + (kExperts + kTopK) * 4 + kDsH * kMx + 2 * kSharedFfn * 2 +
                                kSharedFfn * kMx) +
                           T * kTopK * (kDsH * kMx + 2 * kExpertFfn * 2 + kExpertFfn * kMx));
  CHECK(m0.activations_bytes ==
        Approx(2 * (plan::layer_activation_bytes(s, true) + mla_part + dense_layer)).epsilon(1e-12));
}

TEST_CASE("The peak rank and the activations by kind add up", "[plan][memory]") {
  const Scenario s = test::record_gb300();
  const plan::Layout l = plan::make_layout(s);
  const auto memory = plan::memory_per_stage(s, l);
  const plan::MemoryBreakdown& peak = plan::peak_rank(memory);
  for (const auto& m : memory) CHECK(m.total_bytes() <= peak.total_bytes());
  for (const auto& m : memory) {
    double sum = 0;
    for (double b : m.activations_by_kind) sum += b;
    CHECK(sum == Approx(m.activations_bytes));
  }
  CHECK(plan::peak_moment(l, 0).find("after " + std::to_string(plan::inflight_chunks(l, 0)) + " forwards") !=
        std::string::npos);
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

TEST_CASE("Every published run fits with only the recompute its own recipe states", "[plan][memory]") {
  for (const auto& e : std::filesystem::directory_iterator(test::repo() / "scenarios" / "published")) {
    if (e.path().extension() != ".json") continue;
    const Scenario s = config::load_scenario(e.path());
    const plan::Layout l = plan::make_layout(s);
    for (const auto& m : plan::memory_per_stage(s, l)) {
      INFO(e.path().filename().string() << " pp rank " << m.pp_rank << ": " << m.total_bytes() / 1e9 << " of "
                                        << m.usable_bytes / 1e9 << " GB");
      CHECK(m.fits());
    }
  }
}

TEST_CASE("Memory grows with the micro-batch size", "[plan][memory]") {
  Scenario s = test::record_gb300();
  const plan::Layout l1 = plan::make_layout(s);
  s.training.micro_batch = 2;
  const plan::Layout l2 = plan::make_layout(s);
  CHECK(plan::rank_memory(s, l2, 0).total_bytes() > plan::rank_memory(test::record_gb300(), l1, 0).total_bytes());
}

TEST_CASE("Fits if: every suggestion fits, recompute never speeds a step up", "[plan][memory][fit]") {
  Scenario s = tiny_deepseek();
  const plan::Layout l = plan::make_layout(s);
  // Shrink the GPU so the layout misses by a little: 1 % below the peak.
  const double peak = plan::peak_rank(plan::memory_per_stage(s, l)).total_bytes();
  s.system.gpu.hbm_usable_bytes = 0.99 * peak;
  driver::RunOptions ro;
  const driver::FitReport f = driver::suggest_fits(s, ro);
  REQUIRE_FALSE(f.fitting.empty());
  for (const auto& c : f.fitting) {
    INFO(c.change);
    CHECK(c.fits);
    CHECK(c.peak_bytes <= s.system.gpu.hbm_usable_bytes);
    CHECK(c.tflops_per_gpu > 0);
    if (c.change.rfind("recompute", 0) == 0) CHECK(c.tflops_per_gpu <= f.tflops_per_gpu);
  }
  for (const auto& c : f.not_fitting) CHECK(c.peak_bytes > s.system.gpu.hbm_usable_bytes);
  for (size_t i = 1; i < f.fitting.size(); ++i) CHECK(f.fitting[i].tflops_per_gpu <= f.fitting[i - 1].tflops_per_gpu);
}

TEST_CASE("Megatron-LM's memory estimator, transcribed, on a hand-counted layout", "[plan][memory][validation-memory]") {
  // tiny_deepseek: 1 dense and 3 MoE layers, no MTP, PP2, TP1, EP32, DP32, EDP1. The estimator's
  // most loaded shard: half the layers' TP-sharded and replicated parameters, one embedding,
  // and half the experts over EP; 6 + 12/dp bytes per dense parameter, 6 + 12/edp per expert.
  const Scenario s = tiny_deepseek();
  const plan::Layout l = plan::make_layout(s);
  const double attention = kQLora * (kDsH + kDsHeads * (kNope + kRope) + 1) +
                           kKvLora * (kDsH + kDsHeads * (kNope + kV) + 1) + kDsH * kRope + kDsHeads * kV * kDsH;
  const double tp_block = (attention + 3 * kDsH * kDenseFfn) + 3 * (attention + 3 * kDsH * kSharedFfn);
  const double replicated = 2 * kDsH + 3 * (2 * kDsH + kDsH * kExperts) + kDsH;
  const double experts = 3 * kExperts * 3 * kDsH * kExpertFfn;
  const double dense_shard = tp_block / 2 + kVocab * kDsH + replicated / 2;
  const double expected = dense_shard * (6 + 12.0 / 32) + experts / 2 / 32 * (6 + 12.0 / 1);
  CHECK(driver::megatron_estimator_weight_and_optimizer_bytes(s, l) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("Memory against published figures: measured peaks and Megatron's estimator", "[plan][memory][validation-memory]") {
  std::vector<driver::ValidationRow> runs;
  for (const auto& e : std::filesystem::directory_iterator(test::repo() / "scenarios" / "published")) {
    if (e.path().extension() != ".json") continue;
    driver::ValidationRow r;
    r.result.scenario = config::load_scenario(e.path());
    r.published = *r.result.scenario.published;
    r.result.layout = plan::make_layout(r.result.scenario);
    r.result.memory = plan::memory_per_stage(r.result.scenario, r.result.layout);
    runs.push_back(std::move(r));
  }
  const driver::MemoryValidation v = driver::validate_memory(runs, test::repo() / "scenarios" / "memory", {});
  REQUIRE_FALSE(v.measured.empty());
  for (const auto& m : v.measured) {
    INFO(m.id << ": published " << m.published_bytes / 1e9 << " GB, moesim " << m.simulated_bytes / 1e9 << " GB");
    CHECK(m.within());
  }
  REQUIRE(v.estimator.size() == runs.size());
  for (const auto& e : v.estimator) {
    INFO(e.id << ": estimator " << e.estimator_bytes / 1e9 << " GB, moesim " << e.moesim_bytes / 1e9 << " GB");
    CHECK(std::abs(e.relative_difference()) <= driver::MemoryValidation::kEstimatorTolerance);
  }
}

TEST_CASE("DualPipe holds two parameter copies per rank; the optimizer shards each over both", "[plan][memory]") {
  const Scenario flat = test::uniform_dense(4, 8);
  Scenario dual = flat;
  dual.layout.schedule = "dualpipe";
  const plan::Layout lf = plan::make_layout(flat), ld = plan::make_layout(dual);
  for (int r = 0; r < 4; ++r)
    CHECK(plan::param_shard(dual, ld, r).dense_params ==
          plan::param_shard(flat, lf, r).dense_params + plan::param_shard(flat, lf, 3 - r).dense_params);
  // Middle ranks hold two copies of 2 identical layers: weights and gradients double, the
  // optimizer's states are sharded over the two copies' ranks and stay as in 1F1B.
  const plan::MemoryBreakdown d = plan::rank_memory(dual, ld, 1), f = plan::rank_memory(flat, lf, 1);
  CHECK(d.weights_bytes == 2 * f.weights_bytes);
  CHECK(d.gradients_bytes == 2 * f.gradients_bytes);
  CHECK(d.optimizer_bytes == Approx(f.optimizer_bytes));
  // DSV3 Table 2: DualPipe holds PP + 1 micro-batches' activations, 1F1B PP on the first rank.
  CHECK(plan::inflight_chunks(ld, 0) == 4 + 1);
  CHECK(plan::inflight_chunks(lf, 0) == 4);
}
