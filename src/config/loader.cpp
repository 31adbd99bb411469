// The public entry points of the configuration layer (moesim/config/loader.hpp).
#include "moesim/config/loader.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "parsing_reader.hpp"
#include "references.hpp"
#include "schema.hpp"

namespace moesim::config {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path find_configs_dir(const fs::path& scenario_file, const std::string& explicit_dir) {
  if (!explicit_dir.empty()) {
    std::error_code ec;  // e.g. a name too long for the file system: not a directory
    if (!fs::is_directory(explicit_dir, ec))
      throw ConfigError(explicit_dir, "$", "an existing configs directory (given with --configs)");
    return explicit_dir;
  }
  if (const char* env = std::getenv("MOESIM_CONFIGS"); env && *env) {
    std::error_code ec;
    if (!fs::is_directory(env, ec)) throw ConfigError(env, "$", "an existing configs directory (given by $MOESIM_CONFIGS)");
    return env;
  }
  if (!scenario_file.empty()) {
    std::error_code absolute_error, probe_error;  // a folder that cannot be read is skipped
    fs::path dir = fs::absolute(scenario_file, absolute_error).parent_path();
    for (; !absolute_error && !dir.empty(); dir = dir.parent_path()) {
      if (fs::is_directory(dir / "configs", probe_error)) return dir / "configs";
      if (dir == dir.root_path()) break;
    }
  }
#ifdef MOESIM_SOURCE_DIR
  return fs::path(MOESIM_SOURCE_DIR) / "configs";
#else
  return fs::path("configs");
#endif
}

namespace {

// Loads configs/<kind>/<name>.json on its own; errors name that file.
template <class Spec, class Describe>
Spec load_named(const std::string& kind, const std::string& name, const fs::path& configs_dir, Describe describe) {
  Spec spec;
  std::string resolved;
  const ReferenceSite site{(configs_dir / kind / (name + ".json")).string(), "$", configs_dir, true};
  resolve_reference(json(name), kind, site, [&](Reader& r) { describe(r, spec); }, resolved);
  return spec;
}

}  // namespace

GpuSpec load_gpu(const std::string& name, const fs::path& configs_dir) {
  return load_named<GpuSpec>("hardware", name, configs_dir, describe_gpu);
}
SystemSpec load_system(const std::string& name, const fs::path& configs_dir) {
  return load_named<SystemSpec>("systems", name, configs_dir, describe_system);
}
ModelSpec load_model(const std::string& name, const fs::path& configs_dir) {
  return load_named<ModelSpec>("models", name, configs_dir, describe_model);
}
StackSpec load_stack(const std::string& name, const fs::path& configs_dir) {
  return load_named<StackSpec>("stacks", name, configs_dir, describe_stack);
}
EpDispatcherSpec load_dispatcher(const std::string& name, const fs::path& configs_dir) {
  return load_named<EpDispatcherSpec>("dispatchers", name, configs_dir, describe_dispatcher);
}

Scenario load_scenario_json(const json& scenario, const std::string& label, const LoadOptions& options) {
  DocumentContext context;
  context.label = label;
  context.configs_dir = options.configs_dir.empty() ? find_configs_dir(label) : options.configs_dir;
  Scenario s;
  const CalibrationOverlay* calibration = nullptr;
  const json* document = &scenario;
  json calibrated;  // a copy only when there is an overlay to layer in
  std::vector<CalibrationOverlay> overlays = options.calibrations;
  // The scenario's own "calibration" (a path from its folder) unless the command line gives one
  // for the same system: what the user asks for now wins over what the file was written with.
  if (const auto own = scenario.find("calibration"); own != scenario.end() && own->is_string()) {
    fs::path file = own->get<std::string>();
    if (file.is_relative()) file = fs::path(label).parent_path() / file;
    CalibrationOverlay overlay = read_calibration_overlay(file, context.configs_dir);
    if (const std::string system = referenced_name(scenario, "system"); overlay.system != system)
      throw ConfigError(label, "$.calibration",
                        fmt::format("an overlay of the scenario's system {}; {} calibrates {}", system, file.string(),
                                    overlay.system));
    if (!overlay_for(overlay.system, overlays)) overlays.push_back(std::move(overlay));
  }
  if (!overlays.empty()) {
    calibrated = scenario;
    calibration = apply_calibration(calibrated, overlays, context.configs_dir);
    document = &calibrated;
  }
  parse_document(*document, context, [&](Reader& r) { describe_scenario(r, s); });
  s.file = label;
  if (calibration) {
    s.calibration = calibration->file.string();
    s.calibrated_kernels = calibration->kernels;
    s.calibrated_kernel_sources = calibration->kernel_sources;
  }
  return s;
}

Scenario load_scenario(const fs::path& file, const LoadOptions& options) {
  LoadOptions resolved = options;
  if (resolved.configs_dir.empty()) resolved.configs_dir = find_configs_dir(file);
  return load_scenario_json(read_json_file(file), file.string(), resolved);
}

}  // namespace moesim::config
