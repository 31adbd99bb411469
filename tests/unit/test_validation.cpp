// Published figures reproduced (ctest label `validation`): every run in scenarios/published/
// within its stated tolerance, the GB200 history in order, the GB300 scaling claim and the
// GB300-vs-GB200 ratio. Tolerances wider than 5 % are known gaps, explained in the scenario
// files and docs/validation.md.
#include <catch2/catch.hpp>

#include <cmath>

#include "moesim/driver/schedule_comparison.hpp"
#include "moesim/driver/validate.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

const driver::Validation& validation() {
  static const driver::Validation v = [] {
    driver::RunOptions o;
    o.configs_dir = test::configs_dir().string();
    return driver::validate(test::repo() / "scenarios" / "published",
                            test::repo() / "scenarios" / "gb300-256-record.json", o);
  }();
  return v;
}

const driver::ValidationRow& row(const std::string& id) {
  for (const auto& r : validation().runs)
    if (r.published.id == id) return r;
  FAIL("no published scenario " << id);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("Every published run is reproduced within its tolerance", "[validation]") {
  REQUIRE(validation().runs.size() == 20);
  int within_five_percent = 0;
  for (const auto& r : validation().runs) {
    INFO(r.published.id << ": published " << r.published.tflops_per_gpu << ", simulated "
                        << r.simulated_tflops << " (" << 100 * r.relative_error << " %)");
    CHECK(r.within_tolerance);
    // A tolerance above 5 % must say why.
    CHECK((r.published.tolerance <= 0.05 || !r.published.known_gap.empty()));
    within_five_percent += std::abs(r.relative_error) <= 0.05 ? 1 : 0;
  }
  // Regression guard on the calibration as a whole, not only run by run.
  CHECK(within_five_percent >= 8);
}

TEST_CASE("The GB200 optimisation history keeps its order", "[validation]") {
  CHECK(validation().history_monotone);
  // The software story: the final step is much faster than the baseline.
  CHECK(row("gb200-history-step12").simulated_tflops / row("gb200-history-step0").simulated_tflops > 1.7);
}

TEST_CASE("GB300 record layout keeps its per-GPU throughput from 256 to 1,024 GPUs", "[validation]") {
  const auto& s = validation().scaling;
  INFO("simulated efficiency " << 100 * s.efficiency << " %");
  // Known gap: the published 98.5 % includes straggler and jitter losses that a deterministic,
  // symmetric simulation does not have; moesim stays within 2 points of it.
  CHECK(s.efficiency == Approx(s.published).margin(0.02));
  // Above 100 % only by what the distributed optimizer saves: its per-GPU work shrinks as the
  // data-parallel group that shards it grows (about 0.1 % of the step here).
  CHECK(s.efficiency <= 1.001);
}

TEST_CASE("GB300 beats GB200 on the same software, in the published direction", "[validation]") {
  const double published = 1648.0 / 1292.0;
  const double simulated = row("gb300-mxfp8-2606").simulated_tflops / row("gb200-mxfp8-2606").simulated_tflops;
  INFO("GB300/GB200 (26.06): published " << published << ", simulated " << simulated);
  CHECK(simulated > 1.0);
  // Known gap (docs/validation.md): the GB300 runs are within 1 % but GB200's EP64 runs come
  // out fast, so moesim's ratio is lower than measured.
  CHECK(simulated == Approx(published).epsilon(0.2));
  const double published_2511 = 1088.0 / 1003.0;
  const double simulated_2511 = row("gb300-mxfp8-2511").simulated_tflops / row("gb200-mxfp8-2511").simulated_tflops;
  CHECK(simulated_2511 == Approx(published_2511).epsilon(0.1));
}

TEST_CASE("DeepSeek's own setup runs under DualPipe with DSV3 Table 2's activation counts and bubbles", "[validation]") {
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  const driver::ScheduleComparison c =
      driver::compare_schedules(test::repo() / "scenarios" / "deepseek-v3-h800-dualpipe.json", o);
  REQUIRE(c.rows.size() == 3);
  const auto& f1b = c.rows[0];
  const auto& zb = c.rows[1];
  const auto& dual = c.rows[2];
  REQUIRE(dual.schedule == "dualpipe");
  // DSV3 §3.2: 2,048 H800 GPUs, PP16 with DualPipe, EP64 over 8 nodes, ZeRO-1; it trained in
  // 80 GB. moesim's memory is Megatron-Core/TE's, which keeps the experts' SwiGLU inputs in BF16
  // where DeepSeek caches them in FP8 (DSV3 §3.3.2): the peak comes out above the H800's usable
  // memory, and docs/validation.md says so; `dual.fits` is therefore not asserted here.
  // Table 2's activations per device: PP for 1F1B and ZB1P, PP + 1 for DualPipe.
  CHECK(f1b.inflight_chunks == 16);
  CHECK(zb.inflight_chunks == 16);
  CHECK(dual.inflight_chunks == 17);
  // Table 2's order of bubbles: ZB1P and DualPipe below 1F1B.
  CHECK(zb.simulated_bubble_s < f1b.simulated_bubble_s);
  CHECK(dual.simulated_bubble_s < f1b.simulated_bubble_s);
  CHECK(dual.times.f_and_b > 0);
  CHECK(dual.times.w > 0);
}
