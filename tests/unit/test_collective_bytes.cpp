// The bytes each collective of a DeepSeek-V3 step moves, derived by hand from the model's
// dimensions (not from the code's formulas), and one simulated collective against a closed form
// written out in the test. Simulated-vs-closed-form checks elsewhere move whatever volume the
// workload asks for; these pin the volume itself.
#include <catch2/catch.hpp>

#include <map>

#include "moesim/model/ops.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/workload/step_builder.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;

namespace {

// DeepSeek-V3 (config_671B.json).
constexpr double kH = 7168, kExperts = 256, kTopK = 8, kExpertFfn = 2048, kSharedFfn = 2048, kVocab = 129280;
// One MLA layer's projection parameters, latent norms included, as Megatron counts them:
// q_lora (h + heads (nope + rope) + 1) + kv_lora (h + heads (nope + v) + 1) + h rope + heads v h.
constexpr double kMlaParams = 1536 * (7168 + 128 * (128 + 64) + 1) + 512 * (7168 + 128 * (128 + 128) + 1) +
                              7168 * 64 + 128 * 128 * 7168;
constexpr double kSeq = 4096;

model::Shard deepseek_shard(int tp, int ep) {
  model::Shard s;
  s.tp = tp;
  s.ep = ep;
  s.micro_batch = 1;
  s.seq_len = 4096;
  s.dispatcher = "alltoall";
  return s;
}

const ModelSpec& deepseek() {
  static const ModelSpec m = config::load_model("deepseek-v3", test::configs_dir());
  return m;
}

// DeepSeek-V3 cut to 4 layers (1 dense, 3 MoE) on 128 GPUs: pp 2, ep 32, dp 64, expert-DP 2.
Scenario four_layers_edp2() {
  Scenario s = test::small_moe(4);
  s.gpus = 128;
  s.training.global_batch = 128;  // dp 64 -> 2 micro-batches
  s.layout.pipeline_layout = "Ett|ttL";
  s.recipe.main_grad_dtype = "fp32";
  s.recipe.fp8_param_gather = false;
  return s;
}

// Bytes of the rank's step-level DP collectives, by (activity, group).
std::map<std::pair<workload::Activity, workload::GroupRole>, double> dp_bytes(const workload::RankProgram& prog) {
  std::map<std::pair<workload::Activity, workload::GroupRole>, double> out;
  for (const auto& t : prog.tasks)
    if (t.kind == workload::TaskKind::collective && t.phase == workload::Phase::step) out[{t.activity, t.group}] += t.bytes;
  return out;
}

}  // namespace

TEST_CASE("EP dispatch and combine carry each routed token's hidden state, by hand", "[bytes]") {
  // Each rank routes its 4096 tokens; one copy of a token is its 7168 BF16 values. How many
  // copies leave (top-k for NCCL's all-to-all, the distinct destinations for DeepEP/HybridEP)
  // is the dispatcher's plan (platform/ep_dispatch.hpp, tested there).
  const model::LayerProgram bf16 = model::layer_program(deepseek(), deepseek_shard(1, 32), true);
  CHECK(bf16.comm.ep_tokens == kSeq);
  CHECK(bf16.comm.ep_dispatch_token_bytes == kH * 2);
  CHECK(bf16.comm.ep_combine_token_bytes == kH * 2);
  CHECK(bf16.comm.ep_dispatch_token_bytes == 14336.0);  // 14.3 kB per token copy
  // MXFP8 dispatch: one byte per value plus one E8M0 scale per 32 values; combine stays BF16.
  model::Shard fp8 = deepseek_shard(1, 32);
  fp8.fp8_dispatch = true;
  const model::LayerProgram q = model::layer_program(deepseek(), fp8, true);
  CHECK(q.comm.ep_dispatch_token_bytes == Approx(kH * (1 + 1.0 / 32)).epsilon(1e-12));
  CHECK(q.comm.ep_combine_token_bytes == kH * 2);
  // Sequence parallelism: each of the TP ranks routes its 1/tp of the tokens.
  const model::LayerProgram tp2 = model::layer_program(deepseek(), deepseek_shard(2, 32), true);
  CHECK(tp2.comm.ep_tokens == kSeq / 2);
  // A dense layer has no all-to-all.
  const model::LayerProgram dense = model::layer_program(deepseek(), deepseek_shard(1, 32), false);
  CHECK(dense.comm.ep_tokens == 0);
}

TEST_CASE("TP gathers and scatters the whole sequence's BF16 hidden states, and nothing without TP", "[bytes]") {
  for (int tp : {2, 4, 8}) {
    const model::LayerProgram p = model::layer_program(deepseek(), deepseek_shard(tp, 32), true);
    INFO("tp " << tp);
    // Full buffer S of the collective: 4096 x 7168 BF16 values (a rank holds 1/tp of it).
    CHECK(p.comm.tp_gather_bytes == kSeq * kH * 2);
    CHECK(p.comm.tp_scatter_bytes == kSeq * kH * 2);
  }
  const model::LayerProgram none = model::layer_program(deepseek(), deepseek_shard(1, 32), true);
  CHECK(none.comm.tp_gather_bytes == 0);
  CHECK(none.comm.tp_scatter_bytes == 0);
}

TEST_CASE("Gradients are reduce-scattered in FP32, parameters gathered in BF16 or FP8, by hand", "[bytes]") {
  Scenario s = four_layers_edp2();
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp == 64);
  REQUIRE(l.edp == 2);
  const auto cal = test::calibration(s);
  // Pipeline rank 1: MoE layers 2 and 3, the final norm and the output head.
  const double experts = 2 * (kExperts / 32) * 3 * kH * kExpertFfn;
  const double dense_layer = kMlaParams + 3 * kH * kSharedFfn + 2 * kH + kH * kExperts;
  const double dense = 2 * dense_layer + kVocab * kH + kH;
  using A = workload::Activity;
  using G = workload::GroupRole;
  {
    const auto bytes = dp_bytes(workload::build_step(s, l, cal).stages[1]);
    CHECK(bytes.at({A::dp_grad_sync, G::edp}) == experts * 4);
    CHECK(bytes.at({A::dp_grad_sync, G::dp}) == dense * 4);
    CHECK(bytes.at({A::dp_param_gather, G::edp}) == experts * 2);
    CHECK(bytes.at({A::dp_param_gather, G::dp}) == dense * 2);
  }
  // BF16 gradient buffer (--grad-reduce-in-bf16) and FP8 parameters (--fp8-param-gather).
  s.recipe.main_grad_dtype = "bf16";
  s.recipe.fp8_param_gather = true;
  const auto bytes = dp_bytes(workload::build_step(s, l, cal).stages[1]);
  CHECK(bytes.at({A::dp_grad_sync, G::edp}) == experts * 2);
  CHECK(bytes.at({A::dp_param_gather, G::edp}) == experts * 1);
}

TEST_CASE("PP sends one micro-batch's sequence-parallel BF16 hidden states", "[bytes]") {
  for (int tp : {1, 2}) {
    Scenario s = four_layers_edp2();
    s.layout.tp = tp;
    s.training.micro_batch = 2;
    s.training.global_batch = 128 * 2 / tp;
    const plan::Layout l = plan::make_layout(s);
    const auto cal = test::calibration(s);
    const auto prog = workload::build_step(s, l, cal);
    int sends = 0;
    for (const auto& rank : prog.stages)
      for (const auto& t : rank.tasks)
        if (t.kind == workload::TaskKind::pp_send) {
          ++sends;
          INFO("tp " << tp << ": " << t.label);
          CHECK(t.bytes == 2 * kSeq / tp * kH * 2);  // 2 sequences x 4096 / tp tokens x 7168 x BF16
        }
    CHECK(sends == 2 * l.microbatches);  // forward from rank 0, backward from rank 1
  }
}

TEST_CASE("A simulated all-to-all and ring reduce-scatter take their hand-written closed forms", "[bytes][platform]") {
  using namespace platform;
  using namespace platform::testing;
  const Topology t = gb300_like(72);  // 900 GB/s NVLink per direction, 1 us per hop
  // All-to-all of 8 ranks, 4 MB per pair: 7 x 4 MB through each rank's port, one hop.
  const double a2a = 7 * 4e6 / 900e9 + 1e-6;
  // Ring reduce-scatter of 8 ranks over a 256 MB buffer: 7/8 of it through each port, 7 hops.
  const double rs = 7.0 / 8 * 256e6 / 900e9 + 7 * 1e-6;
  for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
    INFO((f == Fidelity::full ? "full" : "folded"));
    CHECK(simulate(t, f, CollectiveKind::all_to_all, range_group(0, 8), 4e6) == Approx(a2a).epsilon(1e-6));
    CHECK(simulate(t, f, CollectiveKind::reduce_scatter, range_group(0, 8), 256e6) == Approx(rs).epsilon(1e-6));
  }
}
