// moesim plan SCENARIO: the layout, its groups on the machine and the memory per GPU.
#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/report/report.hpp"

namespace moesim::cli {

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Show the parallel layout, groups, placement and memory per GPU");
  auto scenario = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto configs = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  cmd->add_option("scenario", *scenario, "Scenario JSON file")->required();
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--configs", *configs, "configs/ directory (default: found from the scenario)");
  cmd->add_option("-o,--output", *output, "Write to this file instead of stdout");
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
    emit(*format == "json" ? report::plan_json(s, l, memory).dump(2) + "\n"
                           : report::plan_table(s, l, memory),
         *output);
  });
}

void add_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "Print every configuration key (Markdown, as docs/scenarios.md)");
  cmd->callback([] { emit(config::schema_markdown(), ""); });
}

}  // namespace moesim::cli
