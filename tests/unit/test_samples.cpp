// --samples: Student-t intervals, the combined row of a point's seeds, per-seed scaling
// efficiencies, the gates on the pessimistic end, error bars, and the run command's output.
#include <catch2/catch.hpp>

#include <cmath>

#include "moesim/sweep/from_runs.hpp"
#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/row.hpp"
#include "moesim/util/statistics.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;

namespace {

sweep::Json seed_row(int gpus, double tflops, double step) {
  sweep::Json row;
  row["index"] = 0;
  row["gpus"] = gpus;
  for (const std::string& c : sweep::result_columns()) row[c] = nullptr;
  row["status"] = sweep::kStatusOk;
  row["scenario"] = "s";
  row["gpu_count"] = gpus;
  row["tflops_per_gpu"] = tflops;
  row["step_time_s"] = step;
  row["samples"] = 1;
  return row;
}

}  // namespace

TEST_CASE("95 % intervals of a mean use Student's t", "[samples]") {
  // Abramowitz & Stegun 26.10: t(0.975) = 12.706 (1 dof), 4.303 (2), 2.042 (30), 1.980 (120).
  CHECK(util::student_t975(1) == Approx(12.706).epsilon(1e-4));
  CHECK(util::student_t975(2) == Approx(4.303).epsilon(1e-4));
  CHECK(util::student_t975(30) == Approx(2.042).epsilon(1e-3));
  CHECK(util::student_t975(120) == Approx(1.980).epsilon(1e-3));
  // {1, 2, 3}: mean 2, standard deviation 1, half-width 4.303 / sqrt(3).
  const util::Interval i = util::interval95({1, 2, 3});
  CHECK(i.mean == 2);
  CHECK(i.high - i.mean == Approx(4.303 / std::sqrt(3.0)).epsilon(1e-4));
  CHECK(i.mean - i.low == Approx(i.high - i.mean));
  const util::Interval one = util::interval95({5});
  CHECK((one.low == 5 && one.high == 5));
  CHECK_THROWS_AS(util::interval95({}), std::invalid_argument);
}

TEST_CASE("a point's seeds become one row; a series' efficiency is taken per seed", "[samples]") {
  // Two seeds at 256 and 1,024 GPUs: seed k at 1,024 against seed k at 256.
  const std::vector<std::vector<sweep::Json>> seeds = {{seed_row(256, 100, 2.0), seed_row(256, 110, 1.8)},
                                                       {seed_row(1024, 99, 2.02), seed_row(1024, 107.8, 1.85)}};
  const sweep::SweepResult r = sweep::sampled_rows_as_result(seeds, "s", true);
  const sweep::Json& small = r.rows[0];
  const sweep::Json& large = r.rows[1];
  CHECK(small["samples"] == 2);
  CHECK(small["tflops_per_gpu"].get<double>() == Approx(105));
  // Sample standard deviation of {100, 110} = 7.071; half-width 12.706 x 7.071 / sqrt(2) = 63.53.
  CHECK(small["tflops_per_gpu_ci95"][1].get<double>() - 105 == Approx(12.706 * 5).epsilon(1e-4));
  // Per-seed efficiencies 0.99 and 0.98: mean 0.985, half-width 12.706 x 0.00707 / sqrt(2).
  CHECK(large["scaling_efficiency"].get<double>() == Approx(0.985));
  CHECK(large["scaling_efficiency_ci95"][0].get<double>() == Approx(0.985 - 12.706 * 0.005).epsilon(1e-4));
  // The gates see the pessimistic end: the interval's low efficiency and TFLOP/s, high step time.
  const auto points = sweep::gate_points(r);
  CHECK(*points[1].scaling_efficiency == Approx(large["scaling_efficiency_ci95"][0].get<double>()));
  CHECK(*points[1].tflops_per_gpu == Approx(large["tflops_per_gpu_ci95"][0].get<double>()));
  CHECK(*points[1].step_time_s == Approx(large["step_time_s_ci95"][1].get<double>()));
  // The plots draw error bars from the intervals.
  const auto files = sweep::plot_files(r);
  REQUIRE(files.size() == 3);
  CHECK(files[0].content.find("yerrorlines") != std::string::npos);
  CHECK(files[1].content.find("95 % intervals") != std::string::npos);
}

TEST_CASE("moesim run --samples reports intervals, the same whatever --jobs", "[samples]") {
  test::TempTree tree("samples");
  const std::string record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();
  std::string outputs[2];
  for (int jobs : {1, 2}) {
    const auto file = tree.root() / ("samples-" + std::to_string(jobs) + ".json");
    const test::CliResult r = test::run_cli({"run", record, "--gpus", "256,512", "--samples", "3", "-j",
                                             std::to_string(jobs), "-q", "--format", "json", "-o", file.string()},
                                            tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    outputs[jobs - 1] = test::slurp(file);
  }
  CHECK(outputs[0] == outputs[1]);
  const auto series = nlohmann::json::parse(outputs[0]);
  REQUIRE(series.size() == 2);
  for (const auto& p : series) {
    CHECK(p["samples"] == 3);
    CHECK(p["seeds"] == nlohmann::json::array({1, 2, 3}));
    CHECK(p["tflops_per_gpu_ci95"][0].get<double>() <= p["tflops_per_gpu"].get<double>());
    CHECK(p["tflops_per_gpu"].get<double>() <= p["tflops_per_gpu_ci95"][1].get<double>());
    CHECK(p["scaling_efficiency_ci95"].is_array());
  }
  CHECK(series[1]["scaling_efficiency"].get<double>() < 1.0);  // the slowest of 512 GPUs is slower
}
