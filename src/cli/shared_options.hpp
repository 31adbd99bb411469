#pragma once
// Private to src/cli: options that run and sweep share (CI gates, progress, --force) and what
// they do.
#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "moesim/batch/progress.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/specs.hpp"
#include "moesim/driver/gates.hpp"
#include "moesim/engine/simulate.hpp"

namespace moesim::cli {

// A CI gate missed: the report is written, then the command exits 1 with one line per miss.
struct GateFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GateOptions {
  double min_scaling_efficiency = 0, max_step_time_s = 0, min_tflops = 0;
  CLI::Option *min_eff_opt = nullptr, *max_step_opt = nullptr, *min_tflops_opt = nullptr;
  driver::Gates gates() const;
  std::string given() const;  // the first gate option given ("--min-tflops"), "" for none
};
// `what` names the scope of --min-scaling-efficiency ("each point of --gpus", "each series").
void add_gate_options(CLI::App* cmd, GateOptions& g, const std::string& efficiency_scope);
// ConfigError (exit 2) when --min-scaling-efficiency is given on a result without a GPU-count
// axis (`what` names it) or on one shard (a series' reference may be in another).
void require_whole_series(const driver::Gates& gates, bool has_gpu_axis, bool one_shard, const std::string& what);
// GateFailure listing every miss, and every point that did not run; nothing when all pass.
void enforce_gates(const driver::Gates& gates, const std::vector<driver::GatePoint>& points);

// The scenarios of a weak-scaling series (--gpus 256,512,1024: the same layout, the global batch
// grown with the GPU count), checked before any is simulated; ConfigError naming --gpus.
std::vector<Scenario> weak_scaling_series(const Scenario& base, const std::string& gpus);

// --calibration FILE, repeatable: `moesim calibrate`'s overlays, each layered over the scenarios
// on its system (docs/calibration.md).
void add_calibration_option(CLI::App* cmd, std::vector<std::string>& files);
// The overlays read and checked against the systems of `configs_dir`; ConfigError naming the file.
std::vector<config::CalibrationOverlay> read_calibrations(const std::vector<std::string>& files,
                                                          const std::filesystem::path& configs_dir);
// For a command about one system: ConfigError naming --calibration when overlays were given and
// none applied to it (a calibration of another system is a mistake, not a no-op). `subject` names
// the system in the message ("--system gb300-nvl72").
void require_calibrated(const std::vector<std::string>& files, bool applied, const std::string& subject);

// Whether the progress of a batch (validate's steps, search's screening, --samples' seeds) is
// shown: when stderr is a terminal, or with --progress (CI logs); never with -q.
bool show_progress(bool quiet, bool forced);

// Simulation progress on stderr for runs longer than about 2 s: redrawn in place on a
// terminal, one line every few seconds otherwise. Off with -q and, without --progress, when
// stderr is not a terminal; --progress shows it from the start (CI logs).
class SimulationProgress {
 public:
  SimulationProgress(bool quiet, bool forced);
  ~SimulationProgress();
  SimulationProgress(const SimulationProgress&) = delete;
  SimulationProgress& operator=(const SimulationProgress&) = delete;

  // The engine hook for one simulation called `label` (empty: progress is off). It runs in the
  // simulating child process and writes to a descriptor duplicated from stderr here.
  std::function<void(const engine::SimProgress&)> hook(const std::string& label) const;
  void done() const;  // clears the redrawn line, if any

 private:
  int fd_ = -1;
  bool terminal_ = false;
  double quiet_first_s_;  // nothing before this much wall time: short runs stay silent
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace moesim::cli
