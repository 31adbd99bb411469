// moesim run SCENARIO: simulate one training step (or a weak-scaling series) and report.
#include <fmt/format.h>

#include <climits>
#include <optional>
#include <sstream>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/attribution.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/report/report.hpp"
#include "moesim/report/samples.hpp"
#include "moesim/report/trace.hpp"
#include "moesim/sweep/from_runs.hpp"
#include "moesim/sweep/samples.hpp"
#include "moesim/sweep/worker_pool.hpp"
#include "moesim/sweep/writers.hpp"
#include "moesim/util/terminal_text.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

std::string attribution_text(const std::vector<driver::AttributionStep>& steps, const std::string& format) {
  if (format == "table") return driver::attribution_table(steps);
  sweep::Json rows = sweep::Json::array();
  for (std::size_t i = 0; i < steps.size(); ++i)
    rows.push_back({{"step", i}, {"change", steps[i].change}, {"tflops_per_gpu", steps[i].tflops_per_gpu},
                    {"step_time_s", steps[i].step_time_s}});
  if (format == "json") return rows.dump(2) + "\n";
  std::vector<std::vector<std::string>> cells{{"step", "change", "tflops_per_gpu", "step_time_s"}};
  for (const auto& row : rows) {
    cells.emplace_back();
    for (const auto& v : row) cells.back().push_back(sweep::plain_value(v));
  }
  return sweep::csv_text(cells);
}

// --samples: every point at every seed in workers, then means and 95 % intervals; the CSV and the
// gates see the same rows a sweep with --samples would write.
void run_samples(const std::vector<Scenario>& points, int samples, int jobs, driver::RunOptions ro,
                 const std::string& format, const std::string& output, bool gpu_series,
                 const driver::Gates& gates, bool with_progress) {
  ro.engine.sampled = true;
  // A bar of seeds on a terminal, a line every few seconds with --progress; nothing on stdout.
  constexpr double kSeedLinesEvery_s = 5.0;
  std::optional<batch::Progress> progress;
  if (with_progress)
    progress.emplace(static_cast<long long>(points.size()) * samples, "run", "seeds",
                     batch::Progress::stderr_is_terminal(), stderr, kSeedLinesEvery_s);
  std::vector<std::vector<nlohmann::json>> runs(points.size());
  std::vector<std::vector<sweep::Json>> rows(points.size());
  std::string failure;
  sweep::run_samples_in_workers(
      static_cast<int>(points.size()), samples, jobs > 0 ? jobs : sweep::available_cores(),
      [&](int point, int k) {
        const auto r = driver::run_scenario(sweep::sample_scenario(points[static_cast<std::size_t>(point)], k), ro);
        const sweep::Point p = sweep::series_point(point, r.scenario.gpus, gpu_series);
        return nlohmann::json{{"run", report::run_json(r)}, {"row", sweep::result_row(p, r).dump()}}.dump();
      },
      [&](int point, std::vector<std::string>& outputs) {
        for (const std::string& out : outputs) {
          if (out.rfind(sweep::kWorkerFailed, 0) == 0) {
            if (failure.empty()) failure = out.substr(std::string(sweep::kWorkerFailed).size());
            continue;
          }
          const nlohmann::json j = nlohmann::json::parse(out);
          runs[static_cast<std::size_t>(point)].push_back(j.at("run"));
          rows[static_cast<std::size_t>(point)].push_back(sweep::Json::parse(j.at("row").get<std::string>()));
        }
      },
      [&] {
        if (progress) progress->tick();
      });
  if (progress) progress->finish();
  if (!failure.empty()) throw std::runtime_error(failure);
  for (const auto& w : runs.front().front().at("warnings"))
    fmt::print(stderr, "warning: {}\n", util::terminal_safe(w.get<std::string>()));
  const sweep::SweepResult result = sweep::sampled_rows_as_result(rows, points.front().name, gpu_series);
  std::string text;
  if (format == "csv") {
    text = sweep::result_csv(result);
  } else {
    const nlohmann::json summary = gpu_series ? report::sampled_scaling_json(runs) : report::samples_json(runs.front());
    text = format == "json" ? summary.dump(2) + "\n"
           : gpu_series     ? report::sampled_scaling_table(summary)
                            : report::samples_table(summary);
  }
  emit(text, output);
  enforce_gates(gates, sweep::gate_points(result));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Simulate one training step and report throughput, breakdown and memory");
  struct Args {
    std::string scenario, format = "table", configs, output, fidelity = "folded", gpus, trace, attribute_from;
    std::vector<std::string> calibrations;
    bool force = false, quiet = false, progress = false;
    int samples = 1, jobs = 0;
    GateOptions gates;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("scenario", a->scenario, "Scenario JSON file")->required();
  cmd->add_option("--format", a->format, "Output format (csv: the columns of a sweep's sweep.csv)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from the scenario)");
  add_calibration_option(cmd, a->calibrations);
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->add_option("--fidelity", a->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  auto* gpus = cmd->add_option("--gpus", a->gpus, "Weak scaling: comma-separated GPU counts, e.g. 256,512,1024");
  cmd->add_option("--trace", a->trace, "Also write the step as a Chrome trace-event JSON file (Perfetto)")
      ->excludes("--gpus");
  cmd->add_option("--attribute-from", a->attribute_from,
                  "Start from this stack and apply the scenario's stack settings one at a time, "
                  "showing TFLOP/s after each (e.g. megatron-lm-gb200-guide-baseline)")
      ->excludes("--gpus");
  cmd->add_option("--samples", a->samples,
                  "Simulate N seeds (the scenario's seed and the N-1 after it) in parallel workers and report the "
                  "mean and its 95 % confidence interval; each seed draws its own GPU speeds (docs/method.md). "
                  "The gates then compare the interval's pessimistic end")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("-j,--jobs", a->jobs, "Seeds simulated at once with --samples (default: the available cores)")
      ->check(CLI::Range(0, 4096));  // as sweep's: NonNegativeNumber would print a 309-digit bound
  add_gate_options(cmd, a->gates, "a point of --gpus");
  a->gates.min_eff_opt->needs(gpus);
  cmd->add_flag("--force", a->force, "Simulate even when the work estimate exceeds this machine's memory");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--progress", a->progress, "Progress on stderr even when it is not a terminal (CI logs)");
  cmd->callback([a] {
    if (!a->attribute_from.empty() && a->gates.gates().any())
      throw ConfigError("--attribute-from", "$", "no CI gate with --attribute-from (it reports a table of steps)");
    if (a->samples > 1 && (!a->trace.empty() || !a->attribute_from.empty()))
      throw ConfigError("--samples", "$", "--samples without --trace or --attribute-from (they show one seed)");
    config::LoadOptions lo;
    lo.configs_dir = a->configs;
    CommandFiles files;
    config::InputRecorder recorder;
    lo.calibrations = read_calibrations(a->calibrations, config::find_configs_dir(a->scenario, a->configs));
    const Scenario base = config::load_scenario(a->scenario, lo);
    require_calibrated(a->calibrations, !base.calibration.empty(),
                       fmt::format("the system of {} ({})", base.file, base.system.name));
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    ro.calibration_overlays = lo.calibrations;
    ro.force = a->force;
    ro.engine.fidelity = a->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    ro.engine.record_timeline = !a->trace.empty();
    files.inputs_read(recorder, "the scenario");
    files.input(driver::calibration_path(base, ro), "the kernel calibration");
    if (!a->attribute_from.empty())
      files.input(config::find_configs_dir(a->scenario, a->configs) / "stacks" / (a->attribute_from + ".json"),
                  "the --attribute-from stack");
    files.output(a->output, "--output");
    files.output(a->trace, "--trace");
    files.refuse_clashes();

    const SimulationProgress progress(a->quiet, a->progress);
    if (!a->attribute_from.empty()) {
      ro.engine.on_progress = progress.hook(base.name);
      const auto steps = driver::attribute(a->scenario, a->attribute_from, ro);
      progress.done();
      emit(attribution_text(steps, a->format), a->output);
      return;
    }
    const std::vector<Scenario> scenarios = a->gpus.empty() ? std::vector<Scenario>{base} : weak_scaling_series(base, a->gpus);
    if (a->samples > 1) {
      run_samples(scenarios, a->samples, a->jobs, ro, a->format, a->output, !a->gpus.empty(), a->gates.gates(),
                  show_progress(a->quiet, a->progress));
      return;
    }
    std::vector<driver::RunResult> points;
    for (const Scenario& s : scenarios) {
      ro.engine.on_progress = progress.hook(s.name);
      points.push_back(driver::run_scenario(s, ro));
      progress.done();
      for (const auto& w : points.back().warnings) fmt::print(stderr, "warning: {}\n", util::terminal_safe(w));
    }
    const sweep::SweepResult rows = sweep::runs_as_result(points, !a->gpus.empty());
    std::string text;
    if (a->format == "csv") text = sweep::result_csv(rows);
    else if (a->gpus.empty()) text = a->format == "json" ? report::run_json(points.front()).dump(2) + "\n"
                                                         : report::run_table(points.front());
    else text = a->format == "json" ? report::scaling_json(points).dump(2) + "\n" : report::scaling_table(points);
    emit(text, a->output);
    if (!a->trace.empty()) emit(report::trace_json(points.front()).dump() + "\n", a->trace);
    enforce_gates(a->gates.gates(), sweep::gate_points(rows));
  });
}

}  // namespace moesim::cli
