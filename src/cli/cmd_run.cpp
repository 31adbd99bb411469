// moesim run SCENARIO: simulate one training step (or a weak-scaling series) and report.
#include <fmt/format.h>

#include <climits>
#include <sstream>

#include "commands.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/attribution.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/report/report.hpp"
#include "moesim/report/samples.hpp"
#include "moesim/report/trace.hpp"
#include "moesim/sweep/samples.hpp"
#include "moesim/sweep/worker_pool.hpp"

namespace moesim::cli {

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

// The base scenario weak-scaled to each GPU count of --gpus.
std::vector<Scenario> weak_scaling_points(const Scenario& base, const std::string& gpus) {
  std::vector<Scenario> points;
  for (int n : parse_gpu_list(gpus)) {
    if (n > base.system.max_gpus)
      throw ConfigError("--gpus", "$", fmt::format("at most {} GPUs on {} (max_gpus of the system), got {}",
                                                   base.system.max_gpus, base.system.name, n));
    // Weak scaling grows the global batch with the GPU count; it must still fit in an int.
    if (const long long batch = static_cast<long long>(base.training.global_batch) * n / base.gpus; batch > INT_MAX)
      throw ConfigError("--gpus", "$", fmt::format("GPU counts whose scaled global batch fits in 32 bits; {} GPUs "
                                                   "would need a global batch of {}", n, batch));
    points.push_back(driver::scaled_to(base, n));
  }
  return points;
}

// --samples: every point at every seed in workers, then means and intervals.
void run_samples(const std::vector<Scenario>& points, int samples, int jobs, driver::RunOptions ro,
                 const std::string& format, const std::string& output, bool scaling) {
  ro.engine.sampled = true;
  std::vector<std::vector<nlohmann::json>> runs(points.size());
  std::string failure;
  sweep::run_samples_in_workers(
      static_cast<int>(points.size()), samples, jobs > 0 ? jobs : sweep::available_cores(),
      [&](int point, int k) {
        return report::run_json(driver::run_scenario(sweep::sample_scenario(points[static_cast<std::size_t>(point)], k), ro))
            .dump();
      },
      [&](int point, std::vector<std::string>& outputs) {
        for (const std::string& out : outputs) {
          if (out.rfind(sweep::kWorkerFailed, 0) == 0) {
            if (failure.empty()) failure = out.substr(std::string(sweep::kWorkerFailed).size());
            continue;
          }
          runs[static_cast<std::size_t>(point)].push_back(nlohmann::json::parse(out));
        }
      });
  if (!failure.empty()) throw std::runtime_error(failure);
  for (const auto& w : runs.front().front().at("warnings")) fmt::print(stderr, "warning: {}\n", w.get<std::string>());
  const nlohmann::json summary = scaling ? report::sampled_scaling_json(runs) : report::samples_json(runs.front());
  const std::string text = format == "json" ? summary.dump(2) + "\n"
                           : format == "csv" ? report::samples_csv(summary)
                           : scaling         ? report::sampled_scaling_table(summary)
                                             : report::samples_table(summary);
  emit(text, output);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Simulate one training step and report throughput, breakdown and memory");
  struct Args {
    std::string scenario, format = "table", configs, output, fidelity = "folded", gpus, trace, attribute_from;
    int samples = 1, jobs = 0;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("scenario", a->scenario, "Scenario JSON file")->required();
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from the scenario)");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->add_option("--fidelity", a->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  cmd->add_option("--gpus", a->gpus, "Weak scaling: comma-separated GPU counts, e.g. 256,512,1024");
  cmd->add_option("--trace", a->trace, "Also write the step as a Chrome trace-event JSON file (Perfetto)")
      ->excludes("--gpus");
  cmd->add_option("--attribute-from", a->attribute_from,
                  "Start from this stack and apply the scenario's stack settings one at a time, "
                  "showing TFLOP/s after each (e.g. megatron-lm-gb200-guide-baseline)")
      ->excludes("--gpus");
  cmd->add_option("--samples", a->samples,
                  "Simulate N seeds (the scenario's seed and the N-1 after it) in parallel workers and report the "
                  "mean and its 95 % confidence interval; each seed draws its own GPU speeds (docs/method.md)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("-j,--jobs", a->jobs, "Seeds simulated at once with --samples (default: the available cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([a] {
    config::LoadOptions lo;
    lo.configs_dir = a->configs;
    const Scenario base = config::load_scenario(a->scenario, lo);
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    ro.engine.fidelity = a->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    ro.engine.record_timeline = !a->trace.empty();
    if (!a->attribute_from.empty()) {
      emit(driver::attribution_table(driver::attribute(a->scenario, a->attribute_from, ro)), a->output);
      return;
    }

    if (a->samples > 1) {
      if (!a->trace.empty() || !a->attribute_from.empty())
        throw ConfigError("--samples", "$", "--samples without --trace or --attribute-from (they show one seed)");
      std::vector<Scenario> points{base};
      if (!a->gpus.empty()) points = weak_scaling_points(base, a->gpus);
      run_samples(points, a->samples, a->jobs, ro, a->format, a->output, !a->gpus.empty());
      return;
    }
    if (a->gpus.empty()) {
      const driver::RunResult r = driver::run_scenario(base, ro);
      for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", w);
      std::string text = a->format == "json" ? report::run_json(r).dump(2) + "\n"
                         : a->format == "csv" ? report::runs_csv({r})
                                              : report::run_table(r);
      emit(text, a->output);
      if (!a->trace.empty()) emit(report::trace_json(r).dump() + "\n", a->trace);
      return;
    }
    std::vector<driver::RunResult> points;
    for (const Scenario& s : weak_scaling_points(base, a->gpus)) points.push_back(driver::run_scenario(s, ro));
    std::string text = a->format == "json" ? report::scaling_json(points).dump(2) + "\n"
                       : a->format == "csv" ? report::runs_csv(points)
                                            : report::scaling_table(points);
    emit(text, a->output);
  });
}

}  // namespace moesim::cli
