// Model FLOPs (Megatron convention) and parameter counts against the reference values.
#include <catch2/catch.hpp>

#include "moesim/model/flops.hpp"
#include "moesim/model/params.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {
ModelSpec load(const std::string& name) { return config::load_model(name, test::configs_dir()); }
}  // namespace

TEST_CASE("DeepSeek-V3 FLOPs per token equal Megatron's exactly", "[model]") {
  const ModelSpec m = load("deepseek-v3");
  CHECK(model::attention_projection_macs(m) == 187107328.0);
  const auto with_mtp = model::model_flops_per_token(m, 4096, 1);
  CHECK(with_mtp.total() == 259992950784.0);
  CHECK(with_mtp.attention_projections == 69603926016.0);
  CHECK(with_mtp.core_attention == 31205621760.0);
  CHECK(with_mtp.dense_ffn == 7134511104.0);
  CHECK(with_mtp.moe_ffn == 140312051712.0);
  CHECK(with_mtp.mtp_extra == 616691712.0);
  CHECK(with_mtp.logits == 11120148480.0);
  CHECK(model::model_flops_per_token(m, 4096, 0).total() == 249812054016.0);
}

TEST_CASE("DeepSeek-V3 FLOPs follow the closed form F(S) at other lengths", "[model]") {
  const ModelSpec m = load("deepseek-v3");
  for (int S : {1024, 2048, 8192, 16384}) {
    CHECK(model::model_flops_per_token(m, S, 1).total() == 228787329024.0 + 7618560.0 * S);
    CHECK(model::model_flops_per_token(m, S, 0).total() == 219109748736.0 + 7495680.0 * S);
  }
}

TEST_CASE("DeepSeek-V3 parameter counts match the reference", "[model]") {
  const ModelSpec m = load("deepseek-v3");
  const auto c = model::param_counts(m, 1);
  CHECK(c.embedding == Approx(0.927e9).epsilon(0.001));
  CHECK(c.attention == Approx(11.41e9).epsilon(0.001));
  CHECK(c.dense_ffn == Approx(1.19e9).epsilon(0.002));
  CHECK(c.moe_active == Approx(23.10e9).epsilon(0.002));
  CHECK(c.moe_total == Approx(656.6e9).epsilon(0.001));
  CHECK(c.total() == Approx(671e9).epsilon(0.005));
  CHECK(c.active() == Approx(37e9).epsilon(0.03));
  CHECK(c.mtp == Approx(11.5e9).epsilon(0.02));
}

TEST_CASE("Other bundled models' parameter counts match their published sizes", "[model]") {
  struct Case { const char* name; double total, active, tolerance; };
  for (const Case& k : {Case{"deepseek-v2", 236e9, 21e9, 0.03}, Case{"qwen3-235b-a22b", 235e9, 22e9, 0.03},
                        Case{"mixtral-8x7b", 46.7e9, 12.9e9, 0.02}, Case{"mixtral-8x22b", 141e9, 39e9, 0.02},
                        Case{"llama-3.1-405b", 405e9, 405e9, 0.02}}) {
    INFO(k.name);
    const ModelSpec m = load(k.name);
    const auto c = model::param_counts(m, 0);
    CHECK(c.total() == Approx(k.total).epsilon(k.tolerance));
    CHECK(c.active() == Approx(k.active).epsilon(k.tolerance));
  }
}

TEST_CASE("GQA FLOPs follow Megatron's standard attention term", "[model]") {
  const ModelSpec m = load("llama-3.1-405b");
  const double h = 16384, q = 128 * 128, kv = 8 * 128, S = 8192;
  const auto f = model::model_flops_per_token(m, 8192, 0);
  CHECK(f.attention_projections == Approx(6 * 126 * (h * (q + 2 * kv) + q * h)));
  CHECK(f.core_attention == Approx(6 * 126 * (q * S / 2 * 2)));
  CHECK(f.dense_ffn == Approx(6 * 126 * h * 3 * 53248));
  CHECK(f.moe_ffn == 0);
  CHECK(f.logits == Approx(6 * h * 128256));
}
