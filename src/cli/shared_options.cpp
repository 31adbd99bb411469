#include "shared_options.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "moesim/config/error.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/util/atomic_file.hpp"
#include "moesim/util/terminal_text.hpp"

namespace moesim::cli {

driver::Gates GateOptions::gates() const {
  driver::Gates g;
  if (min_eff_opt && min_eff_opt->count() > 0) g.min_scaling_efficiency = min_scaling_efficiency;
  if (max_step_opt && max_step_opt->count() > 0) g.max_step_time_s = max_step_time_s;
  if (min_tflops_opt && min_tflops_opt->count() > 0) g.min_tflops_per_gpu = min_tflops;
  return g;
}

std::string GateOptions::given() const {
  for (const CLI::Option* o : {min_eff_opt, max_step_opt, min_tflops_opt})
    if (o && o->count() > 0) return o->get_name();
  return "";
}

namespace {

// A threshold a gate can be checked against: a finite number in [low, high]. NaN compares false
// with everything, so `--min-tflops nan` would pass every point; CLI::Range lets NaN through.
CLI::Validator gate_threshold(double low, double high, const std::string& meaning) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (number && std::isfinite(v) && v >= low && v <= high) return "";
        return fmt::format("a finite number from {} to {} ({}), got \"{}\": a gate that cannot be checked would "
                           "pass every point", low, high, meaning, util::terminal_safe(text));
      },
      fmt::format("FLOAT in [{} - {}]", low, high));
}

}  // namespace

void add_gate_options(CLI::App* cmd, GateOptions& g, const std::string& efficiency_scope) {
  g.min_eff_opt = cmd->add_option("--min-scaling-efficiency", g.min_scaling_efficiency,
                                  "CI gate: exit 1 when " + efficiency_scope +
                                      " keeps less than this fraction of the first point's per-GPU throughput (e.g. 0.97)")
                      ->check(gate_threshold(0.0, 2.0, "a fraction of the first point's per-GPU throughput"));
  g.max_step_opt = cmd->add_option("--max-step-time", g.max_step_time_s,
                                   "CI gate: exit 1 when a point's step time exceeds this many seconds")
                       ->check(gate_threshold(0.0, 1e9, "seconds"));
  g.min_tflops_opt = cmd->add_option("--min-tflops", g.min_tflops,
                                     "CI gate: exit 1 when a point's model TFLOP/s per GPU is below this")
                         ->check(gate_threshold(0.0, 1e6, "model TFLOP/s per GPU"));
}

void require_whole_series(const driver::Gates& gates, bool has_gpu_axis, bool one_shard, const std::string& what) {
  if (!gates.min_scaling_efficiency) return;
  if (!has_gpu_axis)
    throw ConfigError("--min-scaling-efficiency", "$",
                      "a sweep with a GPU-count axis ({\"gpus\": [...]}); " + what + " has none");
  if (one_shard)
    throw ConfigError("--min-scaling-efficiency", "$",
                      "the whole sweep, not one shard (a series' reference point may be in another shard): gate the "
                      "merged result instead (moesim merge SHARD... -o DIR --min-scaling-efficiency F)");
}

bool show_progress(bool quiet, bool forced) { return !quiet && (forced || batch::Progress::stderr_is_terminal()); }

void enforce_gates(const driver::Gates& gates, const std::vector<driver::GatePoint>& points) {
  const std::vector<std::string> failures = driver::gate_failures(gates, points);
  if (!failures.empty()) throw GateFailure(fmt::format("CI gate failed: {}", fmt::join(failures, "\nCI gate failed: ")));
}

SimulationProgress::SimulationProgress(bool quiet, bool forced) : quiet_first_s_(forced ? 0.0 : 2.0) {
  terminal_ = ::isatty(STDERR_FILENO) == 1;
  if (quiet || (!terminal_ && !forced)) return;
  fd_ = ::dup(STDERR_FILENO);  // the simulating child's own stderr goes to its parent's pipe
}

SimulationProgress::~SimulationProgress() {
  if (fd_ >= 0) ::close(fd_);
}

std::function<void(const engine::SimProgress&)> SimulationProgress::hook(const std::string& label) const {
  if (fd_ < 0) return {};
  constexpr double kLineEvery_s = 5.0;  // plain lines in logs, not a flood
  return [fd = fd_, terminal = terminal_, start = start_, quiet_first_s = quiet_first_s_, label = util::terminal_safe(label),
          last = -1.0](const engine::SimProgress& p) mutable {
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed_s < quiet_first_s || (!terminal && last >= 0 && elapsed_s - last < kLineEvery_s)) return;
    last = elapsed_s;
    const double percent = p.tasks_total > 0 ? 100.0 * static_cast<double>(p.tasks_done) / p.tasks_total : 0;
    const std::string line = fmt::format("{}simulating {}: {:.0f} % of {} tasks, {:.3f} s simulated, {:.0f} s elapsed{}",
                                         terminal ? "\r\033[K" : "", label, percent, p.tasks_total, p.simulated_s,
                                         elapsed_s, terminal ? "" : "\n");
    util::write_all(fd, line);
  };
}

void SimulationProgress::done() const {
  if (fd_ >= 0 && terminal_) util::write_all(fd_, "\r\033[K");
}

namespace {

std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const int n = std::stoi(item, &used);
      if (used != item.size() || n <= 0) throw std::invalid_argument(item);
      out.push_back(n);
    } catch (const std::exception&) {
      throw ConfigError("--gpus", "$", "a comma-separated list of positive GPU counts, got \"" + text + "\"");
    }
  }
  return out;
}

}  // namespace

std::vector<Scenario> weak_scaling_series(const Scenario& base, const std::string& gpus) {
  std::vector<Scenario> out;
  for (int n : parse_gpu_list(gpus)) {
    if (n > base.system.max_gpus)
      throw ConfigError("--gpus", "$", fmt::format("at most {} GPUs on {} (max_gpus of the system), got {}",
                                                   base.system.max_gpus, base.system.name, n));
    // Weak scaling grows the global batch with the GPU count; it must still fit in an int.
    if (const long long batch = static_cast<long long>(base.training.global_batch) * n / base.gpus; batch > INT_MAX)
      throw ConfigError("--gpus", "$", fmt::format("GPU counts whose scaled global batch fits in 32 bits; {} GPUs "
                                                   "would need a global batch of {}", n, batch));
    out.push_back(driver::scaled_to(base, n));
  }
  return out;
}

void add_calibration_option(CLI::App* cmd, std::vector<std::string>& files) {
  cmd->add_option("--calibration", files,
                  "A calibration overlay written by moesim calibrate, layered over the system it calibrates "
                  "(repeatable: one per system; docs/calibration.md)")
      ->check(CLI::ExistingFile);
}

std::vector<config::CalibrationOverlay> read_calibrations(const std::vector<std::string>& files,
                                                          const std::filesystem::path& configs_dir) {
  std::vector<config::CalibrationOverlay> overlays;
  for (const std::string& f : files) {
    overlays.push_back(config::read_calibration_overlay(f, configs_dir));
    const config::CalibrationOverlay& o = overlays.back();
    // Its kernels layer against the kernel file it patches (the config stage cannot read it).
    if (!o.kernels.empty())
      cost::load_calibration(cost::default_calibration_file(configs_dir), o.kernels, o.kernel_sources, f);
  }
  return overlays;
}

void require_calibrated(const std::vector<std::string>& files, bool applied, const std::string& subject) {
  if (files.empty() || applied) return;
  throw ConfigError("--calibration", "$",
                    fmt::format("an overlay for {}; {} calibrate{} other systems", subject, fmt::join(files, ", "),
                                files.size() == 1 ? "s" : ""));
}

}  // namespace moesim::cli
