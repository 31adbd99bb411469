#pragma once
// Reading configuration files into specs. Every reader is strict: unknown keys, wrong types,
// out-of-range values and missing references raise ConfigError(file, json_path, expected).
//
// References: a scenario names a system, model and stack by file stem (configs/systems/<name>.json
// ...), and a system names its GPU (configs/hardware/<name>.json). Any reference may instead be
// an object {"base": "<name>", <field>: <value>, ...} that overrides fields of the referenced
// file inline (objects merge recursively).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/specs.hpp"

namespace moesim::config {

// Where configs/ lives: --configs, then $MOESIM_CONFIGS, then the nearest "configs" folder
// above the scenario file, then the source tree's configs/ compiled in.
std::filesystem::path find_configs_dir(const std::filesystem::path& scenario_file,
                                       const std::string& explicit_dir = "");

struct LoadOptions {
  LoadOptions() = default;
  LoadOptions(std::filesystem::path configs, std::vector<CalibrationOverlay> overlays = {})  // NOLINT: {dir} reads well
      : configs_dir(std::move(configs)), calibrations(std::move(overlays)) {}
  std::filesystem::path configs_dir;  // empty: find_configs_dir(scenario file)
  // Overlays of `moesim calibrate` (--calibration): each patches the scenarios on its system.
  std::vector<CalibrationOverlay> calibrations;
};

// Input files larger than this are refused before they are read whole (a scenario or config is
// kilobytes; a sweep result of 100,000 points about 100 MB): `moesim run /dev/zero` must not
// read until memory runs out.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

// A file's whole text; ConfigError naming the file when it cannot be read or is larger than
// `max_bytes` (regular files are refused from their size, streams after max_bytes + 1 bytes).
std::string read_text_file(const std::filesystem::path& file, std::size_t max_bytes = kMaxInputBytes);

// The most JSON values (objects, arrays, strings, numbers, booleans, nulls) one input may hold
// once parsed: the byte cap alone let a 200 MB file of one huge array take 3.7 GB (issue 42). A
// sweep result of 100,000 points holds about 5 million; this cap, about 0.8 GB of parsed values
// at worst. $MOESIM_MAX_JSON_NODES replaces it (a positive integer).
inline constexpr std::size_t kMaxJsonNodes = std::size_t{1} << 23;
std::size_t max_json_nodes();

// Counts the values of one parse, from a parser callback (nlohmann's parse_event_t, the same
// type for json and ordered_json): a ConfigError naming `label` once there are more than
// max_json_nodes(), while parsing, before the rest is built.
class JsonNodeBudget {
 public:
  explicit JsonNodeBudget(std::string label) : label_(std::move(label)), max_(max_json_nodes()) {}
  void count(nlohmann::detail::parse_event_t event);

 private:
  std::string label_;
  std::size_t max_;
  std::size_t nodes_ = 0;
};

// Reads a JSON file; malformed JSON is a ConfigError naming line and column.
nlohmann::json read_json_file(const std::filesystem::path& file);

// Every file read_text_file() reads while a recorder lives is added to it (and to the
// recorders it was created inside): how a command learns all its inputs (the scenario and each
// config it references) to refuse an output that would overwrite one of them. Single-threaded.
class InputRecorder {
 public:
  InputRecorder();
  ~InputRecorder();
  InputRecorder(const InputRecorder&) = delete;
  InputRecorder& operator=(const InputRecorder&) = delete;
  const std::vector<std::filesystem::path>& files() const { return files_; }
  void add(const std::filesystem::path& file);

 private:
  std::vector<std::filesystem::path> files_;
  InputRecorder* outer_;
};
// Same for JSON text already in memory; `label` names it in errors. A key given twice in one
// object is an error too (nlohmann would silently keep the last one), and so are more values
// than max_json_nodes().
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
EpDispatcherSpec load_dispatcher(const std::string& name, const std::filesystem::path& configs_dir);

// Names of the files of one kind ("hardware", "systems", "models", "stacks", "dispatchers"), sorted.
std::vector<std::string> list_configs(const std::filesystem::path& configs_dir,
                                      const std::string& kind);

// The schema as documentation: one Markdown section per kind with every key's type, unit,
// default and meaning, produced by the same code that parses (docs/scenarios.md).
std::string schema_markdown();

}  // namespace moesim::config
