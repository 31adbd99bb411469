// Replays every input that fuzzing found (tests/fuzz/regressions/) and the seed corpus through
// the fuzzing entry point itself (tests/fuzz/fuzz_entry.hpp), built with the normal compiler,
// so that CI checks them without clang: each must end accepted (a scenario's layout whose cost
// and platform setup passed, a search's or sweep's expansion, a collective's plan) or rejected as
// the CLI rejects it (ConfigError, InfeasibleError, a collective option's usage error), never
// with another exception.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../fuzz/fuzz_entry.hpp"

using namespace moesim;

namespace {

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

fuzz::Result replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  return fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

TEST_CASE("every fuzzing regression input is rejected cleanly", "[fuzz][bad-inputs]") {
  const auto inputs = files_in(std::filesystem::path(MOESIM_SOURCE_DIR) / "tests" / "fuzz" / "regressions");
  REQUIRE(inputs.size() >= 5);
  for (const auto& file : inputs) {
    INFO(file.filename().string());
    fuzz::Result result;
    REQUIRE_NOTHROW(result = replay(file));
    // Each was a bad input, except those named "valid-": inputs the fuzzer found crashing that
    // are good ones (a count that disagreed with its expansion, ...), now accepted.
    const bool valid = file.filename().string().rfind("valid-", 0) == 0;
    CHECK(result.accepted() == valid);
  }
}

TEST_CASE("the seed corpus and the bundled scenarios go through the fuzzing entry point", "[fuzz]") {
  const std::filesystem::path root = MOESIM_SOURCE_DIR;
  std::map<fuzz::Target, int> accepted;
  int layouts = 0;
  for (const auto& dir : {root / "tests" / "fuzz" / "seeds", root / "scenarios"})
    for (const auto& file : files_in(dir)) {
      INFO(file.string());
      fuzz::Result result;
      REQUIRE_NOTHROW(result = replay(file));
      accepted[result.target] += result.accepted() ? 1 : 0;
      layouts += result.outcome == fuzz::Outcome::layout;  // the program built and checked too
    }
  CHECK(layouts >= 10);  // most scenario seeds reach a valid layout, where the interesting inputs are
  // Each target has seeds that reach its expansion or plan, not only rejections.
  CHECK(accepted[fuzz::Target::search] >= 3);
  CHECK(accepted[fuzz::Target::sweep] >= 2);
  CHECK(accepted[fuzz::Target::collective] >= 5);
  CHECK(accepted[fuzz::Target::tool_output] >= 5);  // every bundled calibration example
}

TEST_CASE("the fuzzing entry routes search, sweep, collective and tool-output documents to their targets",
          "[fuzz]") {
  const auto run = [](const std::string& text) {
    return fuzz::run_one(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  };
  // A sweep of the record at two GPU counts: expanded, each point loaded.
  const fuzz::Result sweep =
      run(R"({"sweep": {"name": "s", "base": "../gb300-256-record.json", "axes": [{"gpus": [256, 512]}]}})");
  CHECK(sweep.target == fuzz::Target::sweep);
  CHECK(sweep.outcome == fuzz::Outcome::expanded);
  // An axis path typo is the sweep file's error, as `moesim sweep` reports it.
  const fuzz::Result typo = run(R"({"sweep": {"name": "s", "base": "../gb300-256-record.json",
                                    "axes": [{"path": "layout..tp", "values": [1]}]}})");
  CHECK(typo.target == fuzz::Target::sweep);
  CHECK(typo.outcome == fuzz::Outcome::config_error);
  // A search over two TP degrees: its candidates enumerated and screened.
  const fuzz::Result search = run(R"({"search": {"name": "s", "base": "../gb300-256-record.json",
                                      "space": {"layout": {"tp": [1, 2]}}}})");
  CHECK(search.target == fuzz::Target::search);
  CHECK(search.outcome == fuzz::Outcome::expanded);
  // A search space beyond the 1,000,000 candidates moesim screens unasked: refused (exit 3).
  const fuzz::Result huge = run(R"({"search": {"name": "s", "base": "../gb300-256-record.json",
      "space": {"layout": {"tp": [1,2,3,4,5,6,7,8,9,10], "pp": [1,2,3,4,5,6,7,8,9,10],
                           "ep": [1,2,3,4,5,6,7,8,9,10], "cp": [1,2,3,4,5,6,7,8,9,10]},
                "training": {"micro_batch": [1,2,3,4,5,6,7,8,9,10]}}}})");
  CHECK(huge.outcome == fuzz::Outcome::infeasible);
  // Collective options: planned, or the command line's usage error naming the option.
  const fuzz::Result planned = run(R"({"collective": {"op": "all-reduce", "ranks": 8, "bytes": "1M,1G"}})");
  CHECK(planned.target == fuzz::Target::collective);
  CHECK(planned.outcome == fuzz::Outcome::planned);
  CHECK(run(R"({"collective": {"ep": 72}})").outcome == fuzz::Outcome::usage_error);
  CHECK(run(R"({"collective": {"op": "all-reduce", "bytes": "abc"}})").outcome == fuzz::Outcome::usage_error);
  CHECK(run(R"({"collective": {"system": "no-such-system"}})").outcome == fuzz::Outcome::config_error);
  // A measured output: read as moesim calibrate reads it, or refused by its line.
  const fuzz::Result parsed = run(R"({"tool_output": {"text": "op,bytes,time_us\ncopy,1e9,300\n"}})");
  CHECK(parsed.target == fuzz::Target::tool_output);
  CHECK(parsed.outcome == fuzz::Outcome::parsed);
  CHECK(run(R"({"tool_output": {"text": "op,bytes,time_us\ncopy,1e9,-300\n"}})").outcome ==
        fuzz::Outcome::config_error);
  CHECK(run(R"({"tool_output": {"text": 3}})").outcome == fuzz::Outcome::config_error);
}
