#pragma once
// Reading configuration files into specs. Every reader is strict: unknown keys, wrong types,
// out-of-range values and missing references raise ConfigError(file, json_path, expected).
//
// References: a scenario names a system, model and stack by file stem (configs/systems/<name>.json
// ...), and a system names its GPU (configs/hardware/<name>.json). Any reference may instead be
// an object {"base": "<name>", <field>: <value>, ...} that overrides fields of the referenced
// file inline (objects merge recursively).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/error.hpp"
#include "moesim/config/specs.hpp"

namespace moesim::config {

// Where configs/ lives: --configs, then $MOESIM_CONFIGS, then the nearest "configs" folder
// above the scenario file, then the source tree's configs/ compiled in.
std::filesystem::path find_configs_dir(const std::filesystem::path& scenario_file,
                                       const std::string& explicit_dir = "");

struct LoadOptions {
  std::filesystem::path configs_dir;  // empty: find_configs_dir(scenario file)
};

// Reads a JSON file; malformed JSON is a ConfigError naming line and column.
nlohmann::json read_json_file(const std::filesystem::path& file);
// Same for JSON text already in memory; `label` names it in errors. A key given twice in one
// object is an error too (nlohmann would silently keep the last one).
nlohmann::json parse_json_text(const std::string& text, const std::string& label);

Scenario load_scenario(const std::filesystem::path& file, const LoadOptions& options = {});
// Same, from an already parsed (possibly patched, e.g. by a sweep) scenario object.
// `label` names it in errors; `origin` is the scenario file's path (for finding configs/).
Scenario load_scenario_json(const nlohmann::json& scenario, const std::string& label,
                            const LoadOptions& options);

GpuSpec load_gpu(const std::string& name, const std::filesystem::path& configs_dir);
SystemSpec load_system(const std::string& name, const std::filesystem::path& configs_dir);
ModelSpec load_model(const std::string& name, const std::filesystem::path& configs_dir);
StackSpec load_stack(const std::string& name, const std::filesystem::path& configs_dir);

// Names of the files of one kind ("hardware", "systems", "models", "stacks"), sorted.
std::vector<std::string> list_configs(const std::filesystem::path& configs_dir,
                                      const std::string& kind);

// The schema as documentation: one Markdown section per kind with every key's type, unit,
// default and meaning, produced by the same code that parses (docs/scenarios.md).
std::string schema_markdown();

}  // namespace moesim::config
