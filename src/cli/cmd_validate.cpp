// moesim validate: every published run reproduced, with the error; --format markdown writes
// docs/validation.md. Exits 1 while a predicted (not fitted) row is outside +-5 %
// (driver::validation_failures).
#include <fmt/format.h>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

std::string text_report(const driver::Validation& v) {
  std::string text = fmt::format("{:<28}{:>11}{:>11}{:>9}  {}\n", "run", "published", "moesim", "error", "status");
  for (const auto& r : v.runs)
    text += fmt::format("{:<28}{:>11.1f}{:>11.1f}{:>8.1f}%  {}{}\n", r.published.id, r.published.tflops_per_gpu,
                        r.simulated_tflops, 100 * r.relative_error, driver::to_string(r.status),
                        r.fit_reason.empty() ? "" : " (" + r.fit_reason + ")");
  text += fmt::format("predicted rows inside +-{:.0f} %: {} of {}; mean |error| {:.1f} %, max {:.1f} %\n",
                      100 * driver::kValidationTolerance, v.predicted_inside(), v.predicted(),
                      100 * v.mean_abs_error(), 100 * v.max_abs_error());
  text += fmt::format("GB200 history gains: correlation {:.2f}, RMS difference {:.3f}\n", v.history_gain_correlation,
                      v.history_gain_rms);
  for (const auto& p : v.pairs)
    text += fmt::format("GB300/GB200 {} / {}: moesim {:.3f}, published {:.3f}\n", p.gb300_id, p.gb200_id,
                        p.simulated_ratio, p.published_ratio);
  text += fmt::format("scaling {} -> {} GPUs: {:.1f} % (published {:.1f} %)\n", v.scaling.from_gpus, v.scaling.to_gpus,
                      100 * v.scaling.efficiency, 100 * v.scaling.published);
  for (const auto& e : v.experiments)
    text += fmt::format("gap experiment: {} ({})\n", e.supports ? "supports" : "rejects", e.experiment.explanation);
  for (const auto& r : v.schedules.rows)
    text += fmt::format("{} on {}: bubble {:.2f} s (Table 2 formula {:.2f} s), {} chunks in flight (Table 2: {}), "
                        "{:.1f} GB per GPU{}\n",
                        r.schedule, v.schedules.scenario_file, r.simulated_bubble_s, r.formula_bubble_s,
                        r.inflight_chunks, r.table_activations, r.memory_bytes / 1e9, r.fits ? "" : " (does not fit)");
  return text;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate", "Reproduce every published run and report the errors (exit 1 when a "
                                             "predicted run is outside +-5 %)");
  struct Args {
    std::string root = MOESIM_SOURCE_DIR;
    std::string dir = root + "/scenarios/published";
    std::string record = root + "/scenarios/gb300-256-record.json";
    std::string fitted = root + "/configs/fitted.json";
    std::string experiments = root + "/configs/gap-experiments.json";
    std::string schedules = root + "/scenarios/deepseek-v3-h800-dualpipe.json";
    std::string format = "table", output, configs;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--scenarios", a->dir, "Folder of published scenarios");
  cmd->add_option("--record", a->record, "Scenario whose 256 -> 1,024 weak scaling is checked");
  cmd->add_option("--schedules", a->schedules,
                  "Scenario compared under the pipeline schedules of the DeepSeek-V3 report's Table 2 (\"\" = none)");
  cmd->add_option("--fitted", a->fitted, "Registry of fitted parameters (paths in it are relative to --root; \"\": none)");
  cmd->add_option("--experiments", a->experiments, "Gap explanations and their experiments (\"\": none)");
  cmd->add_option("--root", a->root, "Repository root the registry's paths are relative to");
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"table", "markdown"}));
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->add_option("--configs", a->configs, "configs/ directory");
  cmd->callback([a] {
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    const driver::ValidationInputs inputs{a->dir, a->record, a->fitted, a->experiments, a->root, a->schedules};
    CommandFiles files;
    {
      config::InputRecorder recorder;
      for (const auto& f : driver::published_scenarios(a->dir)) config::load_scenario(f, {a->configs});
      config::load_scenario(a->record, {a->configs});
      if (!a->schedules.empty()) config::load_scenario(a->schedules, {a->configs});
      if (!inputs.fitted_file.empty()) driver::read_fitted(inputs.fitted_file, inputs.repo_root);
      if (!inputs.experiments_file.empty()) driver::read_experiments(inputs.experiments_file);
      files.inputs_read(recorder, "a scenario it reproduces");
    }
    files.output(a->output, "--output");
    files.refuse_clashes();

    const driver::Validation v = driver::validate(inputs, ro);
    emit(a->format == "markdown" ? driver::validation_markdown(v) : text_report(v), a->output);
    // One line per failing row, each whole: joined into one error they were cut at the message
    // cap (2,000 characters), hiding the last rows; each quoted id is bounded instead.
    if (const auto failures = driver::validation_failures(v); !failures.empty()) {
      for (const std::string& failure : failures) fmt::print(stderr, "validation failed: {}\n", failure);
      throw GateFailure(fmt::format("validation failed: {} predicted run{} outside +-{:.0f} % (each listed above)",
                                    failures.size(), failures.size() == 1 ? "" : "s",
                                    100 * driver::kValidationTolerance));
    }
  });
}

}  // namespace moesim::cli
