#pragma once
// What every fuzzing target shares (fuzz_entry.hpp routes an input to one): the outcomes, the
// promises an accepted scenario keeps (its layout's invariants, its cost and platform setup as
// `moesim run` does it before the simulation), and what a rejection must carry.
#include <cmath>
#include <cstddef>
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

// Which input an input is: a scenario, or a top-level {"search": ...}, {"sweep": ...} or
// {"collective": ...} object (fuzz_entry.hpp).
enum class Target { scenario, search, sweep, collective, tool_output };
inline constexpr Target kTargets[] = {Target::scenario, Target::search, Target::sweep, Target::collective,
                                      Target::tool_output};
inline const char* to_string(Target t) {
  switch (t) {
    case Target::scenario: return "scenario";
    case Target::search: return "search";
    case Target::sweep: return "sweep";
    case Target::collective: return "collective";
    default: return "tool_output";
  }
}

// config_error, infeasible, usage_error: rejected as the CLI rejects it (exit 2, 3, 2).
// layout: a scenario accepted, its step program built and checked; expanded: a search's
// candidates or a sweep's points enumerated and a sample of them loaded and checked; planned: a
// collective planned in closed form; too_large: accepted, but beyond what one fuzzing iteration
// builds (the CLI would run it or refuse it by its work estimate, which was computed); parsed: a
// tool's output read as moesim calibrate reads it.
enum class Outcome { config_error, infeasible, usage_error, layout, expanded, planned, too_large, parsed };
inline constexpr Outcome kOutcomes[] = {Outcome::config_error, Outcome::infeasible, Outcome::usage_error,
                                        Outcome::layout,       Outcome::expanded,   Outcome::planned,
                                        Outcome::too_large,    Outcome::parsed};
inline const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::config_error: return "config_error";
    case Outcome::infeasible: return "infeasible";
    case Outcome::usage_error: return "usage_error";
    case Outcome::layout: return "layout";
    case Outcome::expanded: return "expanded";
    case Outcome::planned: return "planned";
    case Outcome::too_large: return "too_large";
    default: return "parsed";
  }
}

struct Result {
  Target target = Target::scenario;
  Outcome outcome = Outcome::config_error;
  bool accepted() const {
    return outcome != Outcome::config_error && outcome != Outcome::infeasible && outcome != Outcome::usage_error;
  }
};

// Programs up to this many tasks are built (a DeepSeek-V3 step on 2 pipeline ranks has 19,000).
inline constexpr long long kMaxFuzzTasks = 50'000;

// A broken promise of the configuration, plan or batch stage (not a rejected input).
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

// A usable message: a file (the input or a bundled config) and a JSON path.
inline void check_config_error(const ConfigError& e) {
  require(!e.file().empty() && !e.json_path().empty() && e.json_path()[0] == '$' && !e.expected().empty(),
          std::string("ConfigError without file, JSON path or expectation: ") + e.what());
}

inline void check_infeasible_error(const InfeasibleError& e) {
  require(std::string(e.what()).size() > 0, "InfeasibleError without a message");
}

// What a loaded scenario promises, however it was derived (a sweep point weak-scaled to another
// GPU count, a search's base with its "gpus"): the counts the schema bounds stay in bounds.
inline void check_scenario(const Scenario& s) {
  require(s.gpus >= 1 && s.training.global_batch >= 1 && s.training.micro_batch >= 1,
          fmt::format("a loaded scenario with {} GPUs, global batch {}, micro-batch {}", s.gpus,
                      s.training.global_batch, s.training.micro_batch));
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

inline const cost::KernelCalibration& bundled_calibration() {
  static const cost::KernelCalibration cal =
      cost::load_calibration(cost::default_calibration_file(bundled_configs()));
  return cal;
}

// The cost and platform setup of an accepted layout, as driver::run_scenario does it before
// the simulation starts.
inline Outcome check_setup(const Scenario& s, const plan::Layout& l) {
  const cost::KernelCalibration& cal = bundled_calibration();
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
  driver::check_simulation_inputs(s, program, platform::Fidelity::full);  // ConfigError when a derived quantity is out of range
  // What passed must be what the platform builder accepts.
  platform::check_topology(platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision));
  return Outcome::layout;
}

}  // namespace moesim::fuzz
