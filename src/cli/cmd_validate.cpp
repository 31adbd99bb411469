// moesim validate: every published run reproduced, with the error; --format markdown writes
// docs/validation.md. Exit 1 when a row is outside its tolerance (driver::validation_failures).
#include <fmt/format.h>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

void add_validate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate", "Reproduce every published run and report the errors (exit 1 when a "
                                             "run is outside its tolerance)");
  struct Args {
    std::string dir = std::string(MOESIM_SOURCE_DIR) + "/scenarios/published";
    std::string record = std::string(MOESIM_SOURCE_DIR) + "/scenarios/gb300-256-record.json";
    std::string schedules = std::string(MOESIM_SOURCE_DIR) + "/scenarios/deepseek-v3-h800-dualpipe.json";
    std::string format = "table", output, configs;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--scenarios", a->dir, "Folder of published scenarios");
  cmd->add_option("--record", a->record, "Scenario whose 256 -> 1,024 weak scaling is checked");
  cmd->add_option("--schedules", a->schedules,
                  "Scenario compared under the pipeline schedules of the DeepSeek-V3 report's Table 2 (\"\" = none)");
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"table", "markdown"}));
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->add_option("--configs", a->configs, "configs/ directory");
  cmd->callback([a] {
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    CommandFiles files;
    {
      config::InputRecorder recorder;
      for (const auto& f : driver::published_scenarios(a->dir)) config::load_scenario(f, {a->configs});
      config::load_scenario(a->record, {a->configs});
      if (!a->schedules.empty()) config::load_scenario(a->schedules, {a->configs});
      files.inputs_read(recorder, "a scenario it reproduces");
    }
    files.output(a->output, "--output");
    files.refuse_clashes();

    const driver::Validation v = driver::validate(a->dir, a->record, ro, a->schedules);
    if (a->format == "markdown") {
      emit(driver::validation_markdown(v), a->output);
    } else {
      std::string text = fmt::format("{:<28}{:>11}{:>11}{:>9}{:>7}  {}\n", "run", "published", "moesim", "error", "tol", "status");
      for (const auto& r : v.runs)
        text += fmt::format("{:<28}{:>11.1f}{:>11.1f}{:>8.1f}%{:>6.0f}%  {}\n", r.published.id, r.published.tflops_per_gpu,
                            r.simulated_tflops, 100 * r.relative_error, 100 * r.published.tolerance,
                            !r.within_tolerance ? "OUTSIDE" : r.published.known_gap.empty() ? "ok" : "known gap");
      text += fmt::format("history monotone: {}\nscaling {} -> {} GPUs: {:.1f} % (published {:.1f} %)\n",
                          v.history_monotone ? "yes" : "NO", v.scaling.from_gpus, v.scaling.to_gpus,
                          100 * v.scaling.efficiency, 100 * v.scaling.published);
      for (const auto& r : v.schedules.rows)
        text += fmt::format("{} on {}: bubble {:.2f} s (Table 2 formula {:.2f} s), {} chunks in flight (Table 2: {}), "
                            "{:.1f} GB per GPU{}\n",
                            r.schedule, v.schedules.scenario_file, r.simulated_bubble_s, r.formula_bubble_s,
                            r.inflight_chunks, r.table_activations, r.memory_bytes / 1e9, r.fits ? "" : " (does not fit)");
      emit(text, a->output);
    }
    if (const auto failures = driver::validation_failures(v); !failures.empty())
      throw GateFailure(fmt::format("validation failed: {}", fmt::join(failures, "\nvalidation failed: ")));
  });
}

}  // namespace moesim::cli
