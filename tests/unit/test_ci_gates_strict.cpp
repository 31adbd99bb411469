// CI gates that must not pass vacuously (issue 42, item 2): a threshold that cannot be compared
// (NaN, infinity, out of range) is invalid input naming the option; a point that did not run
// fails every gate, one line per point naming it; a merged sweep is gated like a sweep.
#include <catch2/catch.hpp>

#include "moesim/driver/gates.hpp"
#include "moesim/sweep/from_runs.hpp"
#include "test_reliability_cli.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::run_cli;
using moesim::test::TempTree;
namespace fs = std::filesystem;

namespace {

std::string strict_gate_record() { return test::record_json_path().string(); }

// How many lines of `text` contain `words`.
int lines_with(const std::string& text, const std::string& words) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(words) != std::string::npos ? 1 : 0;
  return n;
}

// A sweep of the record whose every point is invalid: the axis path has a typo (layout.tpp).
fs::path typo_sweep(const TempTree& tree) {
  return tree.write("typo.json", R"({"name": "typo", "base": ")" + strict_gate_record() + R"(",
    "axes": [{"path": "layout.tpp", "values": [1, 2, 4, 8]}]})");
}

}  // namespace

TEST_CASE("A gate threshold that cannot be compared is refused, naming the option", "[ci-gates-strict]") {
  const TempTree tree("gate-nan");
  const fs::path sweep = tree.write("s.json", R"({"name": "s", "base": ")" + strict_gate_record() + R"(",
    "axes": [{"gpus": [256, 512]}]})");
  // NaN compares false with every value: `step > nan` never fires, so the gate passed vacuously.
  // Infinity, overflow, negatives and words are no thresholds either.
  for (const std::string bad : {"nan", "NaN", "-nan", "inf", "-inf", "1e400", "-1", "ten"}) {
    for (const std::string option : {"--min-tflops", "--max-step-time", "--min-scaling-efficiency"}) {
      for (const std::vector<std::string>& command :
           {std::vector<std::string>{"run", strict_gate_record(), "--gpus", "256,512"},
            std::vector<std::string>{"sweep", sweep.string()}}) {
        std::vector<std::string> args = command;
        args.push_back(option + "=" + bad);  // "=": a value such as -inf is not taken for an option
        const test::CliResult r = run_cli(args, tree.root());
        INFO(command.front() << " " << option << " " << bad << "\n" << r.err);
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Contains(option + ": a finite number from 0 to"));
        CHECK(r.out.empty());  // refused before anything ran
      }
    }
  }
  // An efficiency above 2 (200 % of the first point) is out of range too; the usual values pass
  // the parse (the simulations themselves are test_ci_gates.cpp's).
  const test::CliResult high = run_cli({"sweep", sweep.string(), "--min-scaling-efficiency", "2.5"}, tree.root());
  CHECK(high.code == 2);
  CHECK_THAT(high.err, Contains("--min-scaling-efficiency: a finite number from 0 to 2"));
  const test::CliResult merge_nan =
      run_cli({"merge", tree.root().string(), "-o", (tree.root() / "m").string(), "--min-tflops", "nan"}, tree.root());
  CHECK(merge_nan.code == 2);
  CHECK_THAT(merge_nan.err, Contains("--min-tflops: a finite number"));
}

TEST_CASE("gate_failures fails each point that did not run, one line per point", "[ci-gates-strict]") {
  // test::synthetic_result(): series a and b at 256 and 512 GPUs; b at 512 is invalid.
  const std::vector<driver::GatePoint> points = sweep::gate_points(test::synthetic_result());
  REQUIRE(points.size() == 4);  // every row, not only those with a result
  CHECK(points[3].name == "label=b, gpus=512");
  CHECK(points[3].not_run == "invalid: bad, \"quoted\" | piped");
  CHECK(points[0].not_run.empty());

  driver::Gates g;
  g.max_step_time_s = 100;  // every point that ran passes it (10 s)
  g.min_tflops_per_gpu = 1;
  const auto f = driver::gate_failures(g, points);
  REQUIRE(f.size() == 1);  // one line for the point, not one per gate
  CHECK(f[0] == "label=b, gpus=512: did not run (invalid: bad, \"quoted\" | piped), so --max-step-time, --min-tflops "
                "cannot be checked");
  CHECK(driver::gate_failures(driver::Gates{}, points).empty());  // no gate, nothing to fail
}

TEST_CASE("A sweep whose points did not run fails any gate", "[ci-gates-strict]") {
  const TempTree tree("gate-typo");
  const fs::path sweep = typo_sweep(tree);
  const test::CliResult ungated = run_cli({"sweep", sweep.string(), "-q"}, tree.root());
  CHECK(ungated.code == 0);  // without a gate the rows say why (docs/sweeps.md)
  CHECK_THAT(ungated.err, Contains("4 points: 0 ok, 4 invalid"));
  for (const std::string gate : {"--min-tflops", "--max-step-time"}) {
    const test::CliResult r = run_cli({"sweep", sweep.string(), "-q", gate, "1"}, tree.root());
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(lines_with(r.err, "CI gate failed: ") == 4);
    for (const char* value : {"1", "2", "4", "8"})
      CHECK_THAT(r.err, Contains(std::string("CI gate failed: layout.tpp=") + value + ": did not run (invalid: "));
    CHECK_THAT(r.err, Contains("so " + gate + " cannot be checked"));
    CHECK_THAT(r.out, Contains("invalid"));  // the table is still written
  }
}

TEST_CASE("merge takes the gates of sweep, on the merged result", "[ci-gates-strict]") {
  const TempTree tree("gate-merge");
  const auto at = [&](const std::string& name) { return (tree.root() / name).string(); };  // run_cli keeps our cwd
  const fs::path sweep = tree.write("s.json", R"({"name": "gate", "base": ")" + strict_gate_record() + R"(",
    "axes": [{"gpus": [256, 512]}]})");
  // One shard cannot be gated on efficiency: its series' reference may be in the other.
  const test::CliResult shard =
      run_cli({"sweep", sweep.string(), "--shard", "0/2", "-o", at("x"), "--min-scaling-efficiency", "0.9"}, tree.root());
  CHECK(shard.code == 2);
  CHECK_THAT(shard.err, Contains("gate the merged result instead (moesim merge"));
  for (const char* i : {"0", "1"})
    REQUIRE(run_cli({"sweep", sweep.string(), "-q", "--shard", std::string(i) + "/2", "-o", at(std::string("shard-") + i)},
                    tree.root())
                .code == 0);
  const std::string a = at("shard-0"), b = at("shard-1");
  CHECK(run_cli({"merge", a, b, "-o", at("ok"), "--min-scaling-efficiency", "0.9"}, tree.root()).code == 0);
  const test::CliResult fail = run_cli({"merge", a, b, "-o", at("fail"), "--min-scaling-efficiency", "1.5"}, tree.root());
  CHECK(fail.code == 1);
  CHECK_THAT(fail.err, Contains("CI gate failed: gpus=512: scaling efficiency") &&
                           Contains("is below --min-scaling-efficiency 150.00 %"));
  CHECK(fs::exists(tree.root() / "fail" / "sweep.json"));  // written before the verdict, as sweep does
  const test::CliResult slow = run_cli({"merge", a, b, "-o", at("slow"), "--max-step-time", "0.001"}, tree.root());
  CHECK(slow.code == 1);
  CHECK(lines_with(slow.err, "is above --max-step-time 0.001 s") == 2);

  // Points that did not run fail a merge's gate too.
  const fs::path typo = typo_sweep(tree);
  for (const char* i : {"0", "1"})
    REQUIRE(run_cli({"sweep", typo.string(), "-q", "--shard", std::string(i) + "/2", "-o", at(std::string("typo-") + i)},
                    tree.root())
                .code == 0);
  const test::CliResult typo_merge =
      run_cli({"merge", at("typo-0"), at("typo-1"), "-o", at("typo-merged"), "--min-tflops", "1"}, tree.root());
  CHECK(typo_merge.code == 1);
  CHECK(lines_with(typo_merge.err, ": did not run (invalid: ") == 4);
  // A sweep without a GPU-count axis has no efficiency to gate.
  const test::CliResult no_axis =
      run_cli({"merge", at("typo-0"), at("typo-1"), "-o", at("typo-eff"), "--min-scaling-efficiency", "0.9"}, tree.root());
  CHECK(no_axis.code == 2);
  CHECK_THAT(no_axis.err, Contains("a sweep with a GPU-count axis"));
  // A search's merge ranks candidates: no gate.
  tree.write("search-shard/search.json", "{}");
  const test::CliResult search = run_cli({"merge", at("search-shard"), "-o", at("sm"), "--min-tflops", "1"}, tree.root());
  CHECK(search.code == 2);
  CHECK_THAT(search.err, Contains("--min-tflops: $: no CI gate on a search's merge"));
}
