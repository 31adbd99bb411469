#pragma once
// The one entry point that fuzzing and its regression replay share: a scenario as raw bytes goes
// through the same steps as `moesim run` up to the simulation itself: parse_json_text,
// load_scenario_json against the bundled configs/, plan::make_layout, then the cost and
// platform setup (the work estimate, the step program built and checked, the topology and the
// checks that stand between it and SimGrid: driver::check_simulation_inputs). Rejections must
// be ConfigError (exit 2) or InfeasibleError (exit 3), with a message that names the file and
// a JSON path; anything else escapes as an exception (a crash for libFuzzer, a failure for the
// replay test), and so do sanitizer reports and broken invariants of an accepted layout or
// program. SimGrid itself is not started (one engine per process; each run forks), so the
// checks that guard it are what the fuzzer holds to: whatever passes them is finite and in
// range for the platform builder.
//
// Built twice: by tests/fuzz/fuzz_scenario.cpp (clang, -fsanitize=fuzzer) and by
// tests/unit/test_bad_inputs_fuzz.cpp (the normal g++ test binary, so the replay runs in CI).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/checks.hpp"
#include "moesim/driver/work_estimate.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/platform/topology.hpp"
#include "moesim/workload/step_builder.hpp"

namespace moesim::fuzz {

// layout: accepted, and its step program built and checked; too_large: accepted, but its step
// program is beyond what one fuzzing iteration builds (the CLI would run or refuse it by the
// work estimate, which was computed).
enum class Outcome { config_error, infeasible, layout, too_large };

// Programs up to this many tasks are built (a DeepSeek-V3 step on 2 pipeline ranks has 19,000).
inline constexpr long long kMaxFuzzTasks = 50'000;

// A broken promise of the configuration or plan stage (not a rejected input).
struct InvariantViolation : std::logic_error {
  using std::logic_error::logic_error;
};

inline const char* label() { return "fuzz-input.json"; }

inline std::filesystem::path bundled_configs() {
  return std::filesystem::path(MOESIM_SOURCE_DIR) / "configs";
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw InvariantViolation(what);
}

// What every accepted layout promises the later stages.
inline void check_layout(const Scenario& s, const plan::Layout& l) {
  require(l.world == s.gpus, "layout world differs from gpus");
  require(l.tp >= 1 && l.cp >= 1 && l.pp >= 1 && l.vpp >= 1 && l.dp >= 1 && l.ep >= 1 && l.etp >= 1 && l.edp >= 1,
          "a parallel degree below 1");
  require(static_cast<long long>(l.tp) * l.cp * l.pp * l.dp == l.world,
          fmt::format("tp*cp*pp*dp = {}*{}*{}*{} != world {}", l.tp, l.cp, l.pp, l.dp, l.world));
  require(static_cast<long long>(l.etp) * l.ep * l.edp * l.pp == l.world,
          fmt::format("etp*ep*edp*pp = {}*{}*{}*{} != world {}", l.etp, l.ep, l.edp, l.pp, l.world));
  require(l.microbatches >= 1, "no micro-batch");
  require(static_cast<long long>(l.microbatches) * l.micro_batch * l.dp == s.training.global_batch,
          "microbatches * micro_batch * dp != global_batch");
  require(static_cast<long long>(l.stages.size()) == static_cast<long long>(l.pp) * l.vpp,
          "virtual stages != pp * vpp");
  int layers = 0, mtp = 0, embedding = 0, output = 0;
  for (const auto& v : l.stages) {
    layers += v.layers;
    mtp += v.mtp_layers;
    embedding += v.embedding;
    output += v.output;
  }
  require(layers == s.model.layers && mtp == s.training.mtp_layers && embedding == 1 && output == 1,
          "virtual stages do not hold the model exactly once");
  for (int rank : {0, l.world - 1}) {
    require(static_cast<int>(l.tp_group(rank).size()) == l.tp, "tp group size");
    require(static_cast<int>(l.ep_group(rank).size()) == l.ep, "ep group size");
    require(static_cast<int>(l.pp_group(rank).size()) == l.pp, "pp group size");
  }
}

// The cost and platform setup of an accepted layout, as driver::run_scenario does it before
// the simulation starts.
inline Outcome check_setup(const Scenario& s, const plan::Layout& l) {
  static const cost::KernelCalibration cal =
      cost::load_calibration(cost::default_calibration_file(bundled_configs()));
  const std::vector<long long> counts = workload::task_counts(s, l, cal);
  const driver::WorkEstimate work = driver::estimate_work(l, counts, engine::Options{});
  require(work.program_tasks >= l.pp && std::isfinite(work.memory_bytes) && work.memory_bytes > 0,
          "work estimate without tasks or with a non-finite memory");
  if (work.program_tasks > kMaxFuzzTasks) return Outcome::too_large;
  const workload::StepProgram program = workload::build_step(s, l, cal);
  for (std::size_t r = 0; r < counts.size(); ++r)
    require(counts[r] == static_cast<long long>(program.stages[r].tasks.size()),
            fmt::format("task_counts {} != built {} on pp rank {}", counts[r], program.stages[r].tasks.size(), r));
  require(std::isfinite(program.model_flop_per_gpu) && program.model_flop_per_gpu > 0, "model FLOPs not finite");
  driver::check_simulation_inputs(s, program);  // ConfigError when a derived quantity is out of range
  // What passed must be what the platform builder accepts.
  platform::check_topology(platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision));
  return Outcome::layout;
}

inline Outcome run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json document = config::parse_json_text(text, label());
    config::LoadOptions options;
    options.configs_dir = bundled_configs();
    const Scenario s = config::load_scenario_json(document, label(), options);
    const plan::Layout l = plan::make_layout(s);
    check_layout(s, l);
    return check_setup(s, l);
  } catch (const ConfigError& e) {
    // A usable message: a file (the input or a bundled config) and a JSON path.
    require(!e.file().empty() && !e.json_path().empty() && e.json_path()[0] == '$' && !e.expected().empty(),
            std::string("ConfigError without file, JSON path or expectation: ") + e.what());
    return Outcome::config_error;
  } catch (const InfeasibleError& e) {
    require(std::string(e.what()).size() > 0, "InfeasibleError without a message");
    return Outcome::infeasible;
  }
}

}  // namespace moesim::fuzz
