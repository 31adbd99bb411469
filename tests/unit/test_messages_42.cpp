// Issue 42, item 5: messages. Input errors exit 2 naming the option or the file and JSON path
// the user wrote (not an internal name, a 309-digit range, the base scenario for a sweep's typo
// or a raw filesystem error); an empty sweep journal is no journal; validate shows every
// failing row; a BF16 run on a stack with FP8 parameter gathers names the key to turn off.
#include <fstream>

#include <catch2/catch.hpp>

#include "moesim/sweep/journal.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

test::CliResult messages42_collective(const TempTree& tree, std::vector<std::string> args) {
  args.insert(args.begin(), {"collective", "--configs", tree.configs().string(), "--fidelity", "closed"});
  return run_cli(args, tree.root());
}

// The row of `index` in a sweep's output directory.
json messages42_row(const fs::path& out, int index) {
  const json result = json::parse(test::slurp(out / "sweep.json"));
  for (const json& row : result["rows"])
    if (row["index"] == index) return row;
  FAIL("no row " << index);
  return {};
}

}  // namespace

TEST_CASE("collective's option errors exit 2 naming the option", "[messages-42]") {
  const TempTree tree("msg42-collective");
  // 256 experts over 72 ranks (was: exit 1, "EP exchange: 256 experts do not divide over 72 ranks").
  const test::CliResult ep = messages42_collective(tree, {"--ep", "72"});
  CHECK(ep.code == 2);
  CHECK_THAT(ep.err, Contains("--ep") && Contains("a divisor of the 256 experts") && Contains("got 72"));
  CHECK(ep.err.find("EP exchange") == std::string::npos);
  // Not a number (was: exit 1, "stod").
  const test::CliResult abc = messages42_collective(tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", "abc"});
  CHECK(abc.code == 2);
  CHECK_THAT(abc.err, Contains("--bytes") && Contains("got \"abc\""));
  CHECK(abc.err.find("stod") == std::string::npos);
  CHECK(messages42_collective(tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", "1e999"}).code == 2);
  CHECK(messages42_collective(tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", ","}).code == 2);
  // Router groups that do not divide the experts (was: simulated).
  const test::CliResult groups = messages42_collective(tree, {"--groups", "3"});
  CHECK(groups.code == 2);
  CHECK_THAT(groups.err, Contains("--groups") && Contains("a divisor of the 256 experts") && Contains("got 3"));
  CHECK(messages42_collective(tree, {"--groups", "8", "--topk-groups", "9"}).code == 2);
  CHECK(messages42_collective(tree, {"--groups", "8", "--topk-groups", "4"}).code == 0);
  // No SMs (was: priced as unlimited SMs), and as many as the GPU has.
  const test::CliResult sms = messages42_collective(tree, {"--sms", "0"});
  CHECK(sms.code == 2);
  CHECK_THAT(sms.err, Contains("--sms"));
  CHECK(sms.err.size() < 300);
  const test::CliResult all_sms = messages42_collective(tree, {"--sms", "1000"});
  CHECK(all_sms.code == 2);
  CHECK_THAT(all_sms.err, Contains("--sms") && Contains("fewer than the"));
}

TEST_CASE("collective refuses buffers beyond 1 TiB per rank, which reported absurd bandwidths", "[messages-42]") {
  const TempTree tree("msg42-bytes");
  const test::CliResult huge = messages42_collective(tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", "8589934592G"});
  CHECK(huge.code == 2);  // 2^63 bytes (was: a bus bandwidth of 8 million GB/s)
  CHECK_THAT(huge.err, Contains("--bytes") && Contains("at most 1024G"));
  CHECK(messages42_collective(tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", "1025G"}).code == 2);
  // The bound itself runs, at a bandwidth an NVLink 5 port can carry (900 GB/s each way).
  const test::CliResult tib = messages42_collective(
      tree, {"--op", "all-reduce", "--ranks", "8", "--bytes", "1024G", "--format", "json"});
  INFO(tib.err);
  REQUIRE(tib.code == 0);
  const json row = json::parse(tib.out).at(0);
  CHECK(row["size"] == 1024.0 * 1024 * 1024 * 1024);
  CHECK(row["busbw_gbytes_per_s"].get<double>() > 100);
  CHECK(row["busbw_gbytes_per_s"].get<double>() < 900);
}

TEST_CASE("Negative and zero counts print sane ranges", "[messages-42]") {
  const TempTree tree("msg42-ranges");
  const test::CliResult jobs = run_cli({"run", test::record_json_path().string(), "--jobs", "-1"}, tree.root());
  CHECK(jobs.code == 2);
  CHECK_THAT(jobs.err, Contains("--jobs") && Contains("0 to 4096"));
  CHECK(jobs.err.size() < 200);  // was: a 309-digit upper bound
  const test::CliResult ranks = messages42_collective(tree, {"--ranks", "0"});
  CHECK(ranks.code == 2);
  CHECK_THAT(ranks.err, Contains("--ranks") && Contains("2 to 16777216"));
  CHECK(ranks.err.size() < 200);
  for (const char* option : {"--tokens", "--hidden", "--experts", "--topk", "--groups", "--topk-groups",
                             "--gpus-per-domain", "--sms"}) {
    INFO(option);
    const test::CliResult r = messages42_collective(tree, {option, "-1"});
    CHECK(r.code == 2);
    CHECK(r.err.size() < 200);
  }
}

TEST_CASE("A symbolic link that loops in configs/<kind>/ is left out, and named when referenced", "[messages-42]") {
  const TempTree tree("msg42-symlink-loop");
  fs::create_symlink("loop.json", tree.configs() / "systems" / "loop.json");  // itself: ELOOP
  const fs::path scenario = tree.write("s.json", record_json().dump(2));
  const test::CliResult plan = run_cli({"plan", scenario.string(), "--no-suggestions"}, tree.root());
  INFO(plan.err);
  CHECK(plan.code == 0);  // was: exit 1, "filesystem error: status: Too many levels of symbolic links"
  json s = record_json();
  s["system"] = "loop";
  const fs::path looping = tree.write("loop.json", s.dump(2));
  const test::CliResult r = run_cli({"plan", looping.string()}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("$.system") && Contains((tree.configs() / "systems" / "loop.json").string()) &&
                        Contains("a symbolic link that loops"));
  CHECK(r.err.find("filesystem error") == std::string::npos);
}

TEST_CASE("An empty sweep journal, as a full disk leaves it, is no journal", "[messages-42][sweep]") {
  const TempTree tree("msg42-empty-journal");
  // One point at 20,000 GPUs: an infeasible row, no simulation.
  const fs::path sweep_file = tree.write("x.json", R"({"name": "x", "base": ")" + test::record_json_path().string() +
                                                       R"(", "axes": [{"gpus": [20000]}]})");
  const fs::path out = tree.root() / "out";
  fs::create_directories(out);
  for (const std::string& left : {std::string(), std::string(R"({"fidelity":"fol)")}) {  // empty; header cut short
    for (const bool resume : {false, true}) {
      INFO("journal \"" << left << "\", --resume " << resume);
      std::ofstream(out / sweep::kJournalName) << left;
      std::vector<std::string> args = {"sweep", sweep_file.string(), "-o", out.string(), "-q"};
      if (resume) args.push_back("--resume");
      const test::CliResult r = run_cli(args, tree.root());
      INFO(r.err);
      CHECK(r.code == 0);  // was: exit 2, "holds the finished points" / "differs in its format"
      CHECK(messages42_row(out, 0)["status"] == "infeasible");
    }
  }
  // Text that is no journal header is still not overwritten.
  std::ofstream(out / sweep::kJournalName) << "notes";
  CHECK(run_cli({"sweep", sweep_file.string(), "-o", out.string(), "-q"}, tree.root()).code == 2);
  CHECK(test::slurp(out / sweep::kJournalName) == "notes");
}

TEST_CASE("A sweep's or a search's typo is named in its own file and JSON path", "[messages-42][sweep]") {
  const TempTree tree("msg42-typos");
  const std::string base = R"({"name": "typos", "base": ")" + test::record_json_path().string() + R"(", )";
  // An axis path whose key does not exist (was: "...gb300-256-record.json: $.layout.tpp: ...").
  const fs::path axis_file = tree.write("typos.json", base + R"("axes": [{"path": "layout.tpp", "values": [1]}]})");
  const fs::path out = tree.root() / "out";
  run_cli({"sweep", axis_file.string(), "-o", out.string(), "-q"}, tree.root());
  const std::string axis = messages42_row(out, 0)["reason"].get<std::string>();
  CHECK(axis.rfind("typos.json: $.axes[0].path: a dotted path to a key of the scenario; \"layout.tpp\" is not one", 0) == 0);
  CHECK_THAT(axis, Contains("$.layout.tpp: unknown key"));
  // A listed point's "set" that misspells an object on its way.
  const fs::path set_file = tree.write("set.json", base + R"("points": [{"label": "b", "set": {"layot.tp": 1}}]})");
  const fs::path set_out = tree.root() / "set-out";
  run_cli({"sweep", set_file.string(), "-o", set_out.string(), "-q"}, tree.root());
  const std::string set = messages42_row(set_out, 0)["reason"].get<std::string>();
  CHECK(set.rfind("set.json: $.points[0].set.layot.tp: a dotted path to a key of the scenario", 0) == 0);
  CHECK_THAT(set, Contains("$.layot: unknown key"));

  // A value the scenario refuses is blamed on the value.
  const fs::path values = tree.write("values.json", R"({"name": "values", "base": ")" +
                                                        test::record_json_path().string() + R"(",
    "axes": [{"path": "training.precision", "values": ["mxfp8", "fp7"]}, {"gpus": [20000]}]})");
  const fs::path values_out = tree.root() / "values-out";
  run_cli({"sweep", values.string(), "-o", values_out.string(), "-q"}, tree.root());
  const std::string value = messages42_row(values_out, 1)["reason"].get<std::string>();
  CHECK(value.rfind("values.json: $.axes[0].values[1]: a value the scenario accepts at \"training.precision\"", 0) == 0);
  CHECK_THAT(value, Contains("$.training.precision"));

  // A search's "set" typo stops the search, in the search file.
  const fs::path search = tree.write("search.json", R"({"name": "s", "base": ")" + test::record_json_path().string() +
                                                        R"(", "set": {"layout.tpp": 2}})");
  const test::CliResult s = run_cli({"search", search.string(), "-q"}, tree.root());
  CHECK(s.code == 2);
  CHECK_THAT(s.err, Contains("search.json: $.set.layout.tpp: a dotted path to a key of the scenario"));
}

TEST_CASE("validate shows every failing row whole, however many fail", "[messages-42][end-to-end]") {
  const TempTree tree("msg42-validate");
  const fs::path published = tree.root() / "published";
  fs::create_directories(published);
  json s = json::parse(test::slurp(test::source_dir() / "scenarios" / "published" / "gb300-mxfp8-2606.json"));
  s["published"]["tflops_per_gpu"] = 3000.0;  // no simulation comes near: every row fails
  // Three rows with 900-character ids: joined in one message they passed the 2,000-character
  // cap, which cut the last row off.
  for (const char first : {'a', 'b', 'c'}) {
    s["published"]["id"] = std::string(1, first) + std::string(899, 'x');
    std::ofstream(published / (std::string(1, first) + ".json")) << s.dump(2);
  }
  const test::CliResult r = run_cli({"validate", "--scenarios", published.string(), "--configs", tree.configs().string(),
                                     "--fitted", "", "--experiments", "", "--schedules", ""},
                                    tree.root());
  CHECK(r.code == 1);
  for (const char first : {'a', 'b', 'c'}) {
    INFO(first);
    // Each id cut to 200 characters, then the rest of its line.
    CHECK_THAT(r.err, Contains("validation failed: " + std::string(1, first) + std::string(199, 'x') +
                               "... (700 more characters not shown): "));
  }
  CHECK_THAT(r.err, Contains("validation failed: 3 predicted runs outside +-5 %"));
}

TEST_CASE("A BF16 run on a stack whose recipe gathers FP8 parameters names the key to turn off", "[messages-42]") {
  const TempTree tree("msg42-fp8-gather");
  json s = record_json();
  s["training"]["precision"] = "bf16";
  const fs::path bf16 = tree.write("bf16.json", s.dump(2));
  const test::CliResult r = run_cli({"plan", bf16.string()}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("recipe.fp8_param_gather") && Contains(R"("recipe": {"fp8_param_gather": false})") &&
                        Contains("the stack's recipe turns it on"));
  // The fix the message gives runs.
  s["recipe"]["fp8_param_gather"] = false;
  const fs::path fixed = tree.write("fixed.json", s.dump(2));
  const test::CliResult ok = run_cli({"plan", fixed.string(), "--no-suggestions"}, tree.root());
  INFO(ok.err);
  CHECK(ok.code == 0);
}
