// The same scenario gives byte-identical results across runs: through the moesim binary (JSON
// and CSV files, the plan, a trace, a sweep with one or two workers) and through
// driver::run_scenario called twice in one process.
#include <catch2/catch.hpp>

#include <map>

#include "moesim/driver/run.hpp"
#include "moesim/report/report.hpp"
#include "scenario_fixtures.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using moesim::test::CliResult;
using moesim::test::run_cli;
using moesim::test::slurp;
using moesim::test::TempTree;

namespace {

// Runs `args + --output <file>` twice and returns both files' bytes.
std::pair<std::string, std::string> twice(std::vector<std::string> args, const TempTree& tree,
                                          const std::string& name) {
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    const auto file = tree.root() / (name + "-" + std::to_string(i));
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--output", file.string()});
    const CliResult r = run_cli(a, tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    out[i] = slurp(file);
  }
  return {out[0], out[1]};
}

}  // namespace

TEST_CASE("the moesim binary writes byte-identical JSON and CSV on every run", "[determinism]") {
  TempTree tree("determinism");
  const std::string record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();
  for (const std::string format : {"json", "csv"}) {
    const auto [first, second] = twice({"run", record, "--format", format}, tree, "run." + format);
    CHECK(first.size() > 100);
    CHECK(first == second);
  }
  const auto [first, second] = twice({"plan", record, "--format", "json"}, tree, "plan.json");
  CHECK(first == second);
  // Weak scaling runs several simulations in one process.
  const auto [a, b] = twice({"run", record, "--format", "csv", "--gpus", "256,512"}, tree, "scaling.csv");
  CHECK(a == b);
}

TEST_CASE("driver::run_scenario twice gives identical results", "[determinism]") {
  for (const Scenario& s : {test::small_moe(4), test::record_gb300()}) {
    INFO(s.name);
    driver::RunOptions o;
    o.configs_dir = test::configs_dir().string();
    const driver::RunResult first = driver::run_scenario(s, o);
    const driver::RunResult second = driver::run_scenario(s, o);
    CHECK(report::run_json(first).dump() == report::run_json(second).dump());
    CHECK(report::runs_csv({first}) == report::runs_csv({second}));
    CHECK(first.metrics.step_time_s == second.metrics.step_time_s);  // exactly, not approximately
    CHECK(first.sim.activities == second.sim.activities);
  }
}

TEST_CASE("a trace is byte-identical across runs", "[determinism]") {
  TempTree tree("determinism-trace");
  const std::string record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();
  std::string trace[2];
  for (int i = 0; i < 2; ++i) {
    const auto file = tree.root() / ("trace-" + std::to_string(i) + ".json");
    const CliResult r = run_cli({"run", record, "--format", "json", "--trace", file.string()}, tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    trace[i] = slurp(file);
  }
  CHECK(trace[0].size() > 1000);
  CHECK(trace[0] == trace[1]);
}

TEST_CASE("a sweep writes the same tables whatever the number of workers", "[determinism]") {
  TempTree tree("determinism-sweep");
  tree.write("scenarios/base.json", slurp(test::source_dir() / "scenarios" / "gb300-256-record.json"));
  const auto sweep = tree.write("scenarios/sweep.json", R"({
    "name": "determinism",
    "base": "base.json",
    "axes": [{"path": "layout.ep", "values": [16, 32]}, {"gpus": [256, 512], "mode": "weak"}]
  })");
  std::map<std::string, std::string> files[2];
  for (int i = 0; i < 2; ++i) {
    const auto dir = tree.root() / ("out-" + std::to_string(i));
    const CliResult r = run_cli({"sweep", sweep.string(), "--quiet", "--jobs", i == 0 ? "1" : "2", "--output",
                                 dir.string()},
                                tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    for (const char* name : {"sweep.json", "sweep.csv", "sweep.md"}) files[i][name] = slurp(dir / name);
  }
  for (const auto& [name, text] : files[0]) {
    INFO(name);
    CHECK(text.size() > 100);
    CHECK(text == files[1][name]);
  }
}
