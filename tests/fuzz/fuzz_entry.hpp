#pragma once
// The one entry point that fuzzing and its regression replay share. An input is JSON text for
// one of four targets:
//  - {"search": <a search file>}: read, sized, its candidates enumerated and a sample screened
//    (fuzz_batches.hpp), as `moesim search` does before it simulates;
//  - {"sweep": <a sweep file>}: read, sized, its points expanded and a sample loaded
//    (fuzz_batches.hpp), as `moesim sweep` does before its workers simulate;
//  - {"collective": <moesim collective's options>}: checked and planned in closed form
//    (fuzz_collective.hpp);
//  - {"tool_output": {"text": ..., ...}}: a measured output read as `moesim calibrate` reads it
//    (fuzz_tool_output.hpp); its rejections name the input and the line ("line N");
//  - anything else: a scenario, through the same steps as `moesim run` up to the simulation
//    itself: parse_json_text, load_scenario_json against the bundled configs/,
//    plan::make_layout, then the cost and platform setup (the work estimate, the step program
//    built and checked, the topology and the checks that stand between it and SimGrid:
//    driver::check_simulation_inputs).
// Rejections must be ConfigError (exit 2) with a message that names the file and a JSON path,
// InfeasibleError (exit 3), or for collective options the command line's usage error naming the
// option (exit 2); anything else escapes as an exception (a crash for libFuzzer, a failure for
// the replay test), and so do sanitizer reports and broken invariants (fuzz_checks.hpp). SimGrid
// itself is not started (one engine per process; each run forks), so the checks that guard it
// are what the fuzzer holds to: whatever passes them is finite and in range for the platform
// builder.
//
// Built twice: by tests/fuzz/fuzz_scenario.cpp (clang, -fsanitize=fuzzer) and by
// tests/unit/test_bad_inputs_fuzz.cpp (the normal g++ test binary, so the replay runs in CI).
#include <cstdint>
#include <string>

#include "fuzz_batches.hpp"
#include "fuzz_checks.hpp"
#include "fuzz_collective.hpp"
#include "fuzz_tool_output.hpp"

namespace moesim::fuzz {

// The target of a parsed input: the first of "search", "sweep", "collective", "tool_output" that
// a top-level object holds (no scenario has these keys), else a scenario.
inline Target target_of(const nlohmann::json& document) {
  if (document.is_object())
    for (Target t : {Target::search, Target::sweep, Target::collective, Target::tool_output})
      if (document.contains(to_string(t))) return t;
  return Target::scenario;
}

inline Outcome run_scenario(const nlohmann::json& document) {
  config::LoadOptions options;
  options.configs_dir = bundled_configs();
  const Scenario s = config::load_scenario_json(document, label(), options);
  const plan::Layout l = plan::make_layout(s);
  check_layout(s, l);
  return check_setup(s, l);
}

inline Result run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result r;
  try {
    const nlohmann::json document = config::parse_json_text(text, label());
    r.target = target_of(document);
    switch (r.target) {
      case Target::search: r.outcome = run_search(document.at("search")); break;
      case Target::sweep: r.outcome = run_sweep(document.at("sweep")); break;
      case Target::collective: r.outcome = run_collective(document.at("collective")); break;
      case Target::tool_output: r.outcome = run_tool_output(document.at("tool_output")); break;
      default: r.outcome = run_scenario(document);
    }
  } catch (const ConfigError& e) {
    if (r.target == Target::tool_output && e.json_path().rfind("line ", 0) == 0)  // a tool output's own line
      require(e.file() == label() && !e.expected().empty(), std::string("a tool output's error: ") + e.what());
    else
      check_config_error(e);
    r.outcome = Outcome::config_error;
  } catch (const InfeasibleError& e) {
    check_infeasible_error(e);
    r.outcome = Outcome::infeasible;
  } catch (const driver::CollectiveOptionError& e) {
    require(r.target == Target::collective, std::string("a collective option error outside collective: ") + e.what());
    require(e.option().rfind("--", 0) == 0 && std::string(e.what()).size() > 0,
            std::string("a usage error without option or message: ") + e.what());
    r.outcome = Outcome::usage_error;
  }
  return r;
}

}  // namespace moesim::fuzz
