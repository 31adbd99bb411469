// moesim plan SCENARIO: the layout, its groups on the machine and the memory per GPU; when it
// does not fit, the changes that would make it fit, each simulated.
#include <algorithm>
#include <optional>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/fit.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/report/report.hpp"

namespace moesim::cli {

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Show the parallel layout, groups, placement and memory per GPU");
  auto scenario = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto configs = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto no_suggestions = std::make_shared<bool>(false);
  cmd->add_option("scenario", *scenario, "Scenario JSON file")->required();
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--configs", *configs, "configs/ directory (default: found from the scenario)");
  cmd->add_option("-o,--output", *output, "Write to this file instead of stdout");
  cmd->add_flag("--no-suggestions", *no_suggestions,
                "When the layout does not fit, do not simulate the changes that would make it fit");
  cmd->callback([=] {
    config::LoadOptions lo;
    lo.configs_dir = *configs;
    config::InputRecorder recorder;
    const Scenario s = config::load_scenario(*scenario, lo);
    CommandFiles files;
    files.inputs_read(recorder, "the scenario");
    files.output(*output, "--output");
    files.refuse_clashes();
    const plan::Layout l = plan::make_layout(s);
    const auto memory = plan::memory_per_stage(s, l);
    const bool fits = std::all_of(memory.begin(), memory.end(), [](const auto& m) { return m.fits(); });
    std::optional<driver::FitReport> fits_if;
    if (!fits && !*no_suggestions) {
      driver::RunOptions ro;
      ro.configs_dir = *configs;
      fits_if = driver::suggest_fits(s, ro);
    }
    const driver::FitReport* f = fits_if ? &*fits_if : nullptr;
    emit(*format == "json" ? report::plan_json(s, l, memory, f).dump(2) + "\n" : report::plan_table(s, l, memory, f),
         *output);
  });
}

void add_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "Print every configuration key (Markdown, as docs/scenarios.md)");
  cmd->callback([] { emit(config::schema_markdown(), ""); });
}

}  // namespace moesim::cli
