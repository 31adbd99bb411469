// moesim validate: every published run reproduced, with the error; --format markdown writes
// docs/validation.md, --format json the rows and the summary for scripts. Exits 1 while a
// predicted (not fitted) row is outside +-5 % (driver::validation_failures).
#include <fmt/format.h>

#include <optional>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/campaign/campaign.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

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
    std::string frameworks = root + "/scenarios/frameworks/published";
    std::string format = "table", output, configs;
    std::vector<std::string> calibrations;
    bool explain = false, quiet = false, progress = false, campaigns = true;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--scenarios", a->dir, "Folder of published scenarios");
  cmd->add_option("--record", a->record, "Scenario whose 256 -> 1,024 weak scaling is checked");
  cmd->add_option("--schedules", a->schedules,
                  "Scenario compared under the pipeline schedules of the DeepSeek-V3 report's Table 2 (\"\" = none)");
  cmd->add_option("--frameworks", a->frameworks,
                  "Folder of TorchTitan's and JAX's published scenarios, shown apart (\"\" = none)");
  cmd->add_option("--fitted", a->fitted, "Registry of fitted parameters (paths in it are relative to --root; \"\": none)");
  cmd->add_option("--experiments", a->experiments, "Gap explanations and their experiments (\"\": none)");
  cmd->add_option("--root", a->root, "Repository root the registry's paths are relative to");
  cmd->add_option("--format", a->format, "Output format (json: the rows and the summary, for scripts)")
      ->check(CLI::IsMember({"table", "markdown", "json"}));
  cmd->add_flag("!--no-campaigns", a->campaigns,
                "Leave out the training campaigns (DeepSeek-V3's GPU-hours, Llama 3's interruptions)");
  cmd->add_flag("--explain", a->explain, "Table: print each gap experiment's explanation (a paragraph) under its line");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--progress", a->progress, "Progress on stderr even when it is not a terminal (CI logs)");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->add_option("--configs", a->configs, "configs/ directory");
  add_calibration_option(cmd, a->calibrations);
  cmd->callback([a] {
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    ro.calibration_overlays = read_calibrations(a->calibrations, config::find_configs_dir(a->record, a->configs));
    const driver::ValidationInputs inputs{a->dir,  a->record,    a->fitted,    a->experiments,
                                          a->root, a->schedules, a->frameworks};
    CommandFiles files;
    {
      config::InputRecorder recorder;
      for (const auto& f : driver::published_scenarios(a->dir)) config::load_scenario(f, {a->configs});
      config::load_scenario(a->record, {a->configs});
      if (!a->schedules.empty()) config::load_scenario(a->schedules, {a->configs});
      if (!a->frameworks.empty())
        for (const auto& f : driver::published_scenarios(a->frameworks)) config::load_scenario(f, {a->configs});
      if (!inputs.fitted_file.empty()) driver::read_fitted(inputs.fitted_file, inputs.repo_root);
      if (!inputs.experiments_file.empty()) driver::read_experiments(inputs.experiments_file);
      files.inputs_read(recorder, "a scenario it reproduces");
      for (const std::string& f : a->calibrations) files.input(f, "a --calibration overlay");
    }
    files.output(a->output, "--output");
    files.refuse_clashes();

    // One step per published run, scaling variant, experiment...: a bar on a terminal, a line
    // per step with --progress; stderr only, so the outputs are the same either way.
    std::optional<batch::Progress> bar;
    driver::ValidationProgress progress;
    if (show_progress(a->quiet, a->progress)) {
      progress.start = [&](int total) {
        bar.emplace(total, "validate", "steps", batch::Progress::stderr_is_terminal());
      };
      progress.step_done = [&](const std::string& what) { bar->job_done(what); };
    }
    const driver::Validation v = driver::validate(inputs, ro, progress);
    if (bar) bar->finish();
    const std::vector<campaign::CampaignCheck> campaigns =
        a->campaigns ? campaign::campaign_checks(a->root, ro) : std::vector<campaign::CampaignCheck>{};
    std::string text;
    if (a->format == "markdown") {
      text = driver::validation_markdown(v) + (campaigns.empty() ? "" : "\n" + campaign::campaign_checks_markdown(campaigns));
    } else if (a->format == "json") {
      nlohmann::json j = driver::validation_json(v);
      for (const campaign::CampaignCheck& c : campaigns)
        j["campaigns"].push_back({{"what", c.what}, {"published", c.published}, {"moesim", c.moesim},
                                  {"rule", c.rule}, {"inside", c.inside}});
      text = j.dump(2) + "\n";
    } else {
      text = driver::validation_text(v, a->explain) + campaign::campaign_checks_text(campaigns);
    }
    if (!a->calibrations.empty() && a->format == "table") {  // before and after (issue 41): the bundled run too
      driver::RunOptions bundled = ro;
      bundled.calibration_overlays.clear();
      text += driver::calibration_effect_text(driver::validate(inputs, bundled), v, a->calibrations);
    }
    emit(text, a->output);
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
