// The reported throughput: model TFLOP/s over tokens/s is the model's FLOPs per token, exactly,
// and the published runs that report both figures agree with moesim's FLOPs per token.
#include <catch2/catch.hpp>

#include "moesim/driver/run.hpp"
#include "moesim/driver/validate.hpp"
#include "moesim/model/flops.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

double flops_per_token(const Scenario& s) {
  return model::model_flops_per_token(s.model, s.training.seq_len, s.training.mtp_layers).total();
}

}  // namespace

TEST_CASE("TFLOP/s per GPU over tokens/s per GPU is the model's FLOPs per token", "[engine][metrics]") {
  const Scenario s = test::record_gb300();
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  const auto r = driver::run_scenario(s, o);
  const auto& m = r.metrics;
  // tokens/s per GPU = global batch x sequence / step time / GPUs, written out.
  CHECK(m.tokens_per_s_per_gpu == Approx(4096.0 * 4096 / m.step_time_s / 256).epsilon(1e-12));
  CHECK(m.tflops_per_gpu * 1e12 / m.tokens_per_s_per_gpu == Approx(flops_per_token(s)).epsilon(1e-12));
  CHECK(m.mfu == Approx(m.tflops_per_gpu / m.peak_tflops).epsilon(1e-12));
  CHECK(m.mfu > 0);
  CHECK(m.mfu < 1);
}

TEST_CASE("Published runs with TFLOP/s and tokens/s imply moesim's FLOPs per token within 0.3 %", "[metrics]") {
  int checked = 0;
  for (const auto& file : driver::published_scenarios(test::repo() / "scenarios" / "published")) {
    const Scenario s = config::load_scenario(file);
    if (!s.published || s.published->tflops_per_gpu <= 0 || s.published->tokens_per_s_per_gpu <= 0) continue;
    const double implied = s.published->tflops_per_gpu * 1e12 / s.published->tokens_per_s_per_gpu;
    INFO(file.filename().string() << ": published imply " << implied << " FLOP per token");
    CHECK(implied == Approx(flops_per_token(s)).epsilon(0.003));
    ++checked;
  }
  CHECK(checked >= 3);
}
