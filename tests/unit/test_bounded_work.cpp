// Issue 42, item 3: searches and sweeps are sized from their axes before a candidate or point is
// built (a 19-million-candidate space grew to 11.5 GB with no output, a 1e9-point sweep the
// same), and a JSON input is bounded in parsed values as well as in bytes (a 200 MB array of
// numbers took 3.7 GB).
#include <chrono>
#include <climits>
#include <cstdlib>
#include <optional>

#include <catch2/catch.hpp>

#include "moesim/batch/work_limit.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/search/run.hpp"
#include "moesim/search/space.hpp"
#include "moesim/sweep/run.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::run_cli;
using moesim::test::TempTree;
namespace fs = std::filesystem;

namespace {

// An environment variable for the commands (and the parses) of one test, restored afterwards.
class BoundedWorkEnv {
 public:
  BoundedWorkEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~BoundedWorkEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  BoundedWorkEnv(const BoundedWorkEnv&) = delete;
  BoundedWorkEnv& operator=(const BoundedWorkEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// "[1, 2, ..., n]": a JSON list of the integers 1..n.
std::string bounded_work_integers(int n) {
  std::string out = "[";
  for (int i = 1; i <= n; ++i) out += (i > 1 ? ", " : "") + std::to_string(i);
  return out + "]";
}

std::vector<int> bounded_work_range(int n) {
  std::vector<int> out;
  for (int i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

// The command's result and its wall time in seconds.
std::pair<test::CliResult, double> timed_cli(const std::vector<std::string>& args, const fs::path& scratch) {
  const auto start = std::chrono::steady_clock::now();
  test::CliResult r = run_cli(args, scratch);
  return {r, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// A refusal comes before any candidate or point is built: tens of milliseconds for loading the
// base scenario; the bound leaves room for a loaded CI machine (before the fix these commands
// ran for minutes, until memory ran out).
constexpr double kFastRefusalSeconds = 2.0;

std::string bounded_work_record() { return test::record_json_path().string(); }

}  // namespace

TEST_CASE("Counts of axes multiply without overflow", "[bounded-work][work-limit]") {
  CHECK(batch::saturating_multiply(1ULL << 31, 1ULL << 32) == 1ULL << 63);
  CHECK(batch::saturating_multiply(1ULL << 32, 1ULL << 32) == batch::kCountSaturated);
  CHECK(batch::saturating_multiply(0, batch::kCountSaturated) == 0);
  CHECK(batch::saturating_add(batch::kCountSaturated - 1, 1) == batch::kCountSaturated);
  CHECK(batch::saturating_add(batch::kCountSaturated, 1) == batch::kCountSaturated);
}

TEST_CASE("A search space's candidates are counted exactly without building them", "[bounded-work][work-limit]") {
  search::Space s;
  s.tp = {1, 2};
  s.pp = {1, 2, 4, 8};
  s.vpp = {1, 2, 4};
  s.ep = {8, 16};
  s.etp = {1};
  s.cp = {1};
  s.micro_batch = {1, 2};
  s.schedule = {"1f1b", "dualpipe"};
  // Generated, 2 stages, 4 stages, 8 stages: an explicit layout goes only with pp * vpp = its stages.
  s.pipeline_layout = {"", "Et|tL", "Et|t|t|tL", "E|t|t|t|t|t|t|tL"};
  s.recompute = {{}, {"moe_act"}};
  s.ep_overlap = {false, true};
  s.delay_wgrad = {false};
  s.dispatcher = {"deepep", "hybridep"};
  s.cuda_graphs = {"none"};
  s.layers = 6;
  for (bool defaulted : {false, true}) {
    INFO("vpp defaulted: " << defaulted);
    s.vpp_defaulted = defaulted;  // defaulted: no pp * vpp beyond 6 layers, no vpp > 1 at pp = 1
    CHECK(search::count_candidates(s) == search::enumerate(s).size());
  }
  // The candidates enumerate builds when vpp is defaulted: (pp, vpp) pairs kept are (1,1), (2,1),
  // (2,2), (4,1): 4 with the generated layout, 1 with 2 stages ((2,1)), 2 with 4 stages ((2,2),
  // (4,1)), none with 8; times tp 2, ep 2, mbs 2, schedule 2, recompute 2, overlap 2, dispatcher 2.
  CHECK(search::count_candidates(s) == (4 + 1 + 2) * 2ULL * 2 * 2 * 2 * 2 * 2 * 2);

  // Axes of 65,536 values each: 2^80 candidates, counted at once as saturated.
  search::Space huge = s;
  huge.tp = huge.pp = huge.ep = huge.etp = huge.cp = bounded_work_range(1 << 16);
  huge.vpp_defaulted = false;
  const auto start = std::chrono::steady_clock::now();
  CHECK(search::count_candidates(huge) == batch::kCountSaturated);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kFastRefusalSeconds);
}

TEST_CASE("A sweep's points are counted without expanding them", "[bounded-work][work-limit]") {
  const TempTree tree("bounded-sweep-count");
  const fs::path file = tree.write("s.json", R"({"name": "count", "base": ")" + bounded_work_record() + R"(",
    "points": [{"label": "a"}, {"label": "b", "set": {"layout.pp": 4}}],
    "axes": [{"path": "layout.ep", "values": [8, 16, 32]}, {"gpus": [256, 512]}]})");
  const sweep::SweepSpec spec = sweep::load_sweep(file);
  CHECK(sweep::count_points(spec) == 12);
  CHECK(sweep::count_points(spec) == sweep::expand(spec).size());
  sweep::SweepOptions o;
  o.jobs = 2;
  o.samples = 3;
  const batch::BatchEstimate all = sweep::estimate_sweep(spec, o);
  CHECK(all.count == 12);
  CHECK(all.work_items == 36);  // simulations: points x samples
  CHECK(all.breakdown == "points 2, layout.ep 3, gpus 2");
  // A shard simulates its own points only (i, i + n, ...): 12 points over 5 shards are 3, 3, 2, 2, 2.
  for (const auto& [index, points] : std::vector<std::pair<int, int>>{{0, 3}, {1, 3}, {2, 2}, {4, 2}}) {
    o.shard = batch::Shard{index, 5};
    CHECK(sweep::estimate_sweep(spec, o).work_items == static_cast<std::uint64_t>(points * 3));
  }
}

TEST_CASE("A batch is refused above its limit or the machine's memory unless forced, above 2^31 - 1 always",
          "[bounded-work][work-limit]") {
  batch::BatchEstimate e;
  e.command = "sweep";
  e.items = "points";
  e.work = "simulations (points x samples)";
  e.count = e.work_items = 1000;
  e.memory_bytes = 5e6;
  e.seconds = 10;
  CHECK_NOTHROW(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 5e6, false));  // at the limit: runs
  e.work_items = 1001;
  CHECK_THROWS_WITH(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 5e6, false),
                    Contains("1000 points") && Contains("1001 simulations") && Contains("--force") &&
                        Contains("docs/sweeps.md"));
  CHECK_NOTHROW(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 5e6, true));
  e.work_items = 1000;
  CHECK_THROWS_WITH(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 4.9e6, false),
                    Contains("would not fit on this machine") && Contains("--force"));
  CHECK_NOTHROW(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 4.9e6, true));
  // What an int indexes runs when forced; one more does not, forced or not.
  e.count = e.work_items = INT_MAX;
  CHECK_NOTHROW(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 1e18, true));
  e.count = e.work_items = static_cast<std::uint64_t>(INT_MAX) + 1;
  CHECK_THROWS_WITH(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 1e18, true),
                    Contains("cannot run") && Contains("--force does not lift this"));
  e.count = e.work_items = batch::kCountSaturated;
  CHECK_THROWS_WITH(batch::refuse_oversized_batch(e, 1000, "docs/sweeps.md", 1e18, true),
                    Contains("more than 1.8e+19 points"));
}

TEST_CASE("A search space beyond the limit is refused at once with its estimate", "[bounded-work][search]") {
  const TempTree tree("bounded-search");
  // Every axis fixed but tp, pp and ep (101 values each): 1,030,301 candidates, above 1,000,000.
  const auto space = [&](const std::string& values) {
    return R"({"name": "big", "base": ")" + bounded_work_record() + R"(", "simulate": 0,
      "space": {"layout": {"tp": )" + values + R"(, "pp": )" + values + R"(, "ep": )" + values + R"(,
                           "vpp": [1], "schedule": ["1f1b"], "pipeline_layout": [""]},
                "training": {"micro_batch": [1]},
                "recipe": {"recompute": [[]], "ep_overlap": [false], "delay_wgrad": [false]}}})";
  };
  const fs::path big = tree.write("big.json", space(bounded_work_integers(101)));
  const auto [r, seconds] = timed_cli({"search", big.string(), "-q"}, tree.root());
  INFO(r.err);
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Contains("1.03e+06 candidates") && Contains("tp 101, pp 101") && Contains("GB of memory") &&
                        Contains("of wall time") && Contains("--force") && Contains("docs/search.md"));
  CHECK(seconds < kFastRefusalSeconds);

  // 2,000 values on three axes: 8e9 candidates, more than an int numbers: refused even forced.
  const fs::path huge = tree.write("huge.json", space(bounded_work_integers(2000)));
  const auto [forced, forced_s] = timed_cli({"search", huge.string(), "-q", "--force"}, tree.root());
  INFO(forced.err);
  CHECK(forced.code == 3);
  CHECK_THAT(forced.err, Contains("8e+09 candidates") && Contains("2^31 - 1"));
  CHECK(forced_s < kFastRefusalSeconds);
}

TEST_CASE("search --force screens a space its estimate refuses", "[bounded-work][search]") {
  const TempTree tree("bounded-search-force");
  // 16 candidates (tp 2 x pp 2 x ep 4), none the record's own layout (pp 2): nothing to simulate.
  const fs::path file = tree.write("s.json", R"({"name": "small", "base": ")" + bounded_work_record() + R"(",
    "simulate": 0, "space": {"layout": {"tp": [1, 2], "pp": [1, 4], "ep": [8, 16, 32, 64], "vpp": [1],
      "schedule": ["1f1b"], "pipeline_layout": [""]}, "training": {"micro_batch": [1]},
      "recipe": {"recompute": [[]], "ep_overlap": [false], "delay_wgrad": [false]}}})");
  const BoundedWorkEnv tiny("MOESIM_MEMORY_BYTES", "1000");  // 16 candidates need about 16 kB
  const test::CliResult refused = run_cli({"search", file.string(), "-q"}, tree.root());
  CHECK(refused.code == 3);
  CHECK_THAT(refused.err, Contains("16 candidates") && Contains("would not fit on this machine") && Contains("--force"));
  const test::CliResult forced = run_cli({"search", file.string(), "-q", "--force", "--format", "json"}, tree.root());
  INFO(forced.err);
  CHECK(forced.code == 0);
  CHECK(nlohmann::json::parse(forced.out)["evaluated"] == 16);
}

TEST_CASE("A sweep beyond the limit is refused at once with its estimate; --force runs one its memory refuses",
          "[bounded-work][sweep]") {
  const TempTree tree("bounded-sweep");
  const std::string base = R"({"name": "big", "base": ")" + bounded_work_record() + R"(", "axes": [)";
  // 400 x 300 = 120,000 points, above the 100,000 simulations of the limit.
  const fs::path big = tree.write("big.json", base + R"({"path": "layout.ep", "values": )" + bounded_work_integers(400) +
                                                  R"(}, {"path": "layout.tp", "values": )" +
                                                  bounded_work_integers(300) + "}]}");
  const auto [r, seconds] = timed_cli({"sweep", big.string(), "-q"}, tree.root());
  INFO(r.err);
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Contains("120000 points (layout.ep 400, layout.tp 300)") && Contains("GB of memory") &&
                        Contains("of wall time") && Contains("--force") && Contains("docs/sweeps.md"));
  CHECK(seconds < kFastRefusalSeconds);

  // 2,000 points at 100 samples each: 200,000 simulations.
  const fs::path sampled = tree.write("sampled.json", base + R"({"path": "layout.ep", "values": )" +
                                                          bounded_work_integers(2000) + "}]}");
  const test::CliResult many = run_cli({"sweep", sampled.string(), "-q", "--samples", "100"}, tree.root());
  CHECK(many.code == 3);
  CHECK_THAT(many.err, Contains("2000 points") && Contains("200000 simulations (points x samples)"));

  // Four axes of 1,000 values: 1e12 points, beyond what an int numbers: refused even forced.
  std::string axes;
  for (const char* path : {"layout.tp", "layout.pp", "layout.ep", "layout.vpp"})
    axes += std::string(axes.empty() ? "" : ", ") + R"({"path": ")" + path + R"(", "values": )" +
            bounded_work_integers(1000) + "}";
  const fs::path huge = tree.write("huge.json", base + axes + "]}");
  const auto [forced, forced_s] = timed_cli({"sweep", huge.string(), "-q", "--force"}, tree.root());
  INFO(forced.err);
  CHECK(forced.code == 3);
  CHECK_THAT(forced.err, Contains("1e+12 points") && Contains("2^31 - 1"));
  CHECK(forced_s < kFastRefusalSeconds);

  // Two points, refused for the machine's memory; --force runs them (each point then meets
  // run's own work estimate, which refuses it: an infeasible row, not a failure).
  const fs::path two = tree.write("two.json", base + R"({"gpus": [256, 512]}]})");
  const BoundedWorkEnv tiny("MOESIM_MEMORY_BYTES", "1000");
  const test::CliResult refused = run_cli({"sweep", two.string(), "-q"}, tree.root());
  CHECK(refused.code == 3);
  CHECK_THAT(refused.err, Contains("2 points") && Contains("would not fit on this machine"));
  const test::CliResult ran = run_cli({"sweep", two.string(), "-q", "--force"}, tree.root());
  INFO(ran.err);
  CHECK(ran.code == 0);
  CHECK_THAT(ran.err, Contains("2 points: 0 ok, 2 infeasible"));
}

TEST_CASE("A JSON input with more values than the cap is refused while it is parsed", "[bounded-work][json-nodes]") {
  {
    const BoundedWorkEnv unset("MOESIM_MAX_JSON_NODES", "");
    CHECK(config::max_json_nodes() == config::kMaxJsonNodes);
  }
  const BoundedWorkEnv cap("MOESIM_MAX_JSON_NODES", "10");
  CHECK(config::max_json_nodes() == 10);
  // The list and 9 numbers: 10 values; one more number is one too many.
  CHECK_NOTHROW(config::parse_json_text(bounded_work_integers(9), "nine.json"));
  const ConfigError e = test::config_error([] { config::parse_json_text(bounded_work_integers(10), "ten.json"); });
  CHECK(e.file() == "ten.json");
  CHECK_THAT(e.expected(), Contains("at most 10 values"));
  // Objects, lists, strings, booleans and nulls count alike; keys do not: 10 values.
  CHECK_NOTHROW(config::parse_json_text(R"({"a": {"b": [true, null, "s"]}, "c": [1, 2], "d": {}})", "mixed.json"));
  CHECK_THROWS_AS(config::parse_json_text(R"({"a": {"b": [true, null, "s"]}, "c": [1, 2, 3], "d": {}})", "x.json"),
                  ConfigError);
}

TEST_CASE("Commands refuse a JSON file past the value cap with exit 2, naming it", "[bounded-work][json-nodes]") {
  const TempTree tree("bounded-json");
  const BoundedWorkEnv cap("MOESIM_MAX_JSON_NODES", "1000");
  const fs::path scenario = tree.write("array.json", bounded_work_integers(2000));
  const test::CliResult r = run_cli({"run", scenario.string()}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains(scenario.string() + ": $: a JSON document of at most 1000 values"));
  // A sweep result read by merge goes through the same count.
  const fs::path result = tree.write("shard/sweep.json", bounded_work_integers(2000));
  const test::CliResult m = run_cli({"merge", result.parent_path().string(), "-o", (tree.root() / "out").string()},
                                    tree.root());
  CHECK(m.code == 2);
  CHECK_THAT(m.err, Contains(result.string() + ": $: a JSON document of at most 1000 values"));
}
