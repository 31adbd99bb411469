// CI gates a user can call (README.md, "Use in CI"): validate's exit code, the scaling,
// step-time and TFLOP/s thresholds on run and sweep, and the formats a CI job reads.
#include <algorithm>

#include <catch2/catch.hpp>

#include "moesim/driver/gates.hpp"
#include "moesim/sweep/row.hpp"
#include "moesim/sweep/writers.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::slurp;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// RFC 4180: fields separated by commas, a quoted field may hold commas, CR/LF and doubled quotes.
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, at_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"' && at_start) {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
      at_start = true;
      continue;
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
      at_start = true;
      continue;
    } else {
      field += c;
    }
    at_start = false;
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

std::string record() { return (test::source_dir() / "scenarios" / "gb300-256-record.json").string(); }

}  // namespace

TEST_CASE("gate_failures names each point and value that misses a threshold", "[ci-gates]") {
  driver::Gates g;
  g.min_scaling_efficiency = 0.97;
  g.max_step_time_s = 10;
  g.min_tflops_per_gpu = 1000;
  const std::vector<driver::GatePoint> points = {{"gpus=256", 9.0, 1500.0, 1.0, ""},
                                                 {"gpus=1024", 11.0, 900.0, 0.9612, ""},
                                                 {"gpus=2048", std::nullopt, std::nullopt, std::nullopt, ""}};
  const auto f = driver::gate_failures(g, points);
  REQUIRE(f.size() == 6);
  CHECK(f[0] == "gpus=1024: scaling efficiency 96.12 % is below --min-scaling-efficiency 97.00 %");
  CHECK_THAT(f[1], Contains("gpus=1024: step time 11.0000 s is above --max-step-time 10 s"));
  CHECK_THAT(f[2], Contains("gpus=1024: 900.0 model TFLOP/s per GPU is below --min-tflops 1000"));
  CHECK_THAT(f[3], Contains("gpus=2048: no scaling efficiency"));
  CHECK(driver::gate_failures(driver::Gates{}, points).empty());
}

TEST_CASE("run --gpus --min-scaling-efficiency fails the command on a point below it", "[ci-gates]") {
  const TempTree tree("gate-run");
  const test::CliResult pass = run_cli({"run", record(), "--gpus", "256,512", "--min-scaling-efficiency", "0.97"},
                                       tree.root());
  CHECK(pass.code == 0);
  CHECK_THAT(pass.out, Contains("efficiency"));
  // No layout keeps 150 % of its per-GPU throughput: the gate must fire, naming the point.
  const test::CliResult fail = run_cli({"run", record(), "--gpus", "256,512", "--min-scaling-efficiency", "1.5"},
                                       tree.root());
  CHECK(fail.code == 1);
  CHECK_THAT(fail.err, Contains("CI gate failed: gpus=512: scaling efficiency") &&
                           Contains("is below --min-scaling-efficiency 150.00 %"));
  CHECK_THAT(fail.out, Contains("weak scaling"));  // the report is written before the gate fails
  CHECK(run_cli({"run", record(), "--min-scaling-efficiency", "0.97"}, tree.root()).code == 2);  // needs --gpus
}

TEST_CASE("run --max-step-time and --min-tflops gate a single point", "[ci-gates]") {
  const TempTree tree("gate-point");
  const test::CliResult slow = run_cli({"run", record(), "--max-step-time", "1", "-q"}, tree.root());
  CHECK(slow.code == 1);
  CHECK_THAT(slow.err, Contains("is above --max-step-time 1 s"));
  const test::CliResult weak = run_cli({"run", record(), "--min-tflops", "100000"}, tree.root());
  CHECK(weak.code == 1);
  CHECK_THAT(weak.err, Contains("is below --min-tflops 100000"));
  CHECK(run_cli({"run", record(), "--max-step-time", "1000", "--min-tflops", "100"}, tree.root()).code == 0);
}

TEST_CASE("sweep --min-scaling-efficiency gates each series", "[ci-gates]") {
  const TempTree tree("gate-sweep");
  const fs::path sweep = tree.write("s.json", R"({"name": "gate", "base": ")" + record() + R"(",
    "axes": [{"gpus": [256, 512]}]})");
  CHECK(run_cli({"sweep", sweep.string(), "-q", "--min-scaling-efficiency", "0.97"}, tree.root()).code == 0);
  const test::CliResult fail = run_cli({"sweep", sweep.string(), "-q", "--min-scaling-efficiency", "1.5"}, tree.root());
  CHECK(fail.code == 1);
  CHECK_THAT(fail.err, Contains("gpus=512: scaling efficiency"));
  const fs::path flat = tree.write("flat.json", R"({"name": "flat", "base": ")" + record() + R"("})");
  const test::CliResult no_axis = run_cli({"sweep", flat.string(), "--min-scaling-efficiency", "0.9"}, tree.root());
  CHECK(no_axis.code == 2);
  CHECK_THAT(no_axis.err, Contains("a sweep with a GPU-count axis"));
}

TEST_CASE("validate exits 1 when a run is outside its tolerance, 0 when all are inside", "[ci-gates][end-to-end]") {
  const TempTree tree("gate-validate");
  const fs::path published = tree.root() / "published";
  fs::create_directories(published);
  json s = json::parse(slurp(test::source_dir() / "scenarios" / "published" / "gb300-mxfp8-2606.json"));
  const std::string file = (published / "run.json").string();
  std::ofstream(file) << s.dump(2);
  // A folder of other published runs: no fitted-parameter registry, no gap experiments.
  const std::vector<std::string> args = {"validate", "--scenarios", published.string(), "--configs",
                                         (test::source_dir() / "configs").string(), "--fitted", "", "--experiments", ""};
  s["published"]["tflops_per_gpu"] = 3000.0;  // no simulation of this run comes near
  std::ofstream(file) << s.dump(2);
  const test::CliResult outside = run_cli(args, tree.root());
  CHECK(outside.code == 1);
  CHECK_THAT(outside.out, Contains("OUTSIDE"));
  CHECK_THAT(outside.err, Contains("validation failed: gb300-mxfp8-2606") && Contains("is outside +-5 %"));

  // The same run with the figure set to what moesim simulates (read back from the failure line)
  // is inside the tolerance: validate exits 0.
  const std::string marker = "gb300-mxfp8-2606: ";
  const std::size_t at = outside.err.find(marker);
  REQUIRE(at != std::string::npos);
  const double simulated = std::stod(outside.err.substr(at + marker.size()));
  REQUIRE(simulated > 0);
  s["published"]["tflops_per_gpu"] = simulated;
  std::ofstream(file) << s.dump(2);
  const test::CliResult inside = run_cli(args, tree.root());
  INFO(inside.err);
  CHECK(inside.code == 0);
  CHECK_THAT(inside.out, Contains("gb300-mxfp8-2606") && Contains("ok"));
}

TEST_CASE("run --format csv has sweep.csv's columns and RFC 4180 quoting", "[ci-gates][formats]") {
  const TempTree tree("run-csv");
  json s = record_json();
  s["name"] = "record, \"quoted\"\nand a second line";
  const fs::path scenario = tree.write("s.json", s.dump(2));
  const test::CliResult r = run_cli({"run", scenario.string(), "--format", "csv", "-q"}, tree.root());
  REQUIRE(r.code == 0);
  const auto rows = read_csv(r.out);
  REQUIRE(rows.size() == 2);
  std::vector<std::string> columns = sweep::row_columns({});
  CHECK(rows[0] == columns);
  REQUIRE(rows[1].size() == columns.size());
  const auto at = [&](const std::string& c) {
    return rows[1][static_cast<std::size_t>(std::find(columns.begin(), columns.end(), c) - columns.begin())];
  };
  CHECK(at("scenario") == s["name"].get<std::string>());  // round-trips through a CSV reader
  CHECK(at("status") == "ok");
  // Numbers as sweep.csv writes them: the shortest form that reads back to the same double.
  const double tflops = std::stod(at("tflops_per_gpu"));
  CHECK(sweep::plain_value(sweep::Json(tflops)) == at("tflops_per_gpu"));

  const test::CliResult series = run_cli({"run", scenario.string(), "--gpus", "256,512", "--format", "csv"}, tree.root());
  REQUIRE(series.code == 0);
  const auto series_rows = read_csv(series.out);
  REQUIRE(series_rows.size() == 3);
  CHECK(series_rows[0] == sweep::row_columns({"gpus"}));
  const std::vector<std::string> series_columns = sweep::row_columns({"gpus"});
  const auto efficiency = static_cast<std::size_t>(
      std::find(series_columns.begin(), series_columns.end(), "scaling_efficiency") - series_columns.begin());
  REQUIRE(efficiency < series_rows[1].size());
  CHECK(series_rows[1][efficiency] == "1");  // the series' first point is its efficiency reference
}

TEST_CASE("Attribution honours --format", "[ci-gates][formats]") {
  const TempTree tree("attribution-format");
  const std::string scenario = (test::source_dir() / "scenarios" / "published" / "gb200-history-step2.json").string();
  const test::CliResult r = run_cli({"run", scenario, "--attribute-from", "megatron-lm-gb200-guide-baseline",
                                     "--format", "json"}, tree.root());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json steps = json::parse(r.out);
  REQUIRE(steps.is_array());
  REQUIRE(steps.size() >= 1);
  CHECK(steps[0].at("change").get<std::string>().rfind("start", 0) == 0);
  CHECK(steps[0].at("tflops_per_gpu").get<double>() > 0);
}
