// Calibration overlays (moesim/config/calibration_overlay.hpp): read strictly, checked against
// the system they patch, and layered under a scenario's own overrides.
#include "moesim/config/calibration_overlay.hpp"

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "parsing_reader.hpp"
#include "references.hpp"
#include "schema.hpp"
#include "text.hpp"

namespace moesim::config {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Every leaf an override object sets, dotted ("nccl.nvlink_efficiency"), its sources left out.
void collect_keys(const json& overrides, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [name, value] : overrides.items()) {
    if (prefix.empty() && name == "sources") continue;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object()) collect_keys(value, key, out);
    else out.push_back(key);
  }
}

// The name a scenario's "system" references (a name, or {"base": name, ...}); "" for neither.
std::string referenced_system(const json& scenario) {
  const auto it = scenario.find("system");
  if (it == scenario.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    const auto base = it->find("base");
    if (base != it->end() && base->is_string()) return base->get<std::string>();
  }
  return "";
}

SystemSpec load_system_at(const std::string& name, const ReferenceSite& site, const json& overrides) {
  json ref = overrides;
  ref["base"] = name;
  SystemSpec spec;
  std::string resolved;
  resolve_reference(ref, "systems", site, [&](Reader& r) { describe_system(r, spec); }, resolved);
  return spec;
}

}  // namespace

SystemSpec load_system_with(const std::string& name, const fs::path& configs_dir, const json& overrides) {
  if (overrides.empty()) return load_system(name, configs_dir);
  const ReferenceSite site{(configs_dir / "systems" / (name + ".json")).string(), "$", configs_dir, false};
  return load_system_at(name, site, overrides);
}

CalibrationOverlay read_calibration_overlay(const fs::path& file, const fs::path& configs_dir) {
  const std::string label = file.string();
  const json doc = read_json_file(file);
  if (!doc.is_object())
    throw ConfigError(label, "$", "a calibration overlay object (written by moesim calibrate); got " +
                                      describe_json_value(doc));
  for (const auto& [name, value] : doc.items())
    if (name != "moesim_calibration" && name != "about" && name != "system" && name != "overrides" &&
        name != "parameters" && name != "warnings" && name != "fits")
      throw ConfigError(label, child_path("$", name),
                        "one of moesim_calibration, about, system, overrides, parameters, warnings, fits (unknown key)");
  const auto format = doc.find("moesim_calibration");
  if (format == doc.end() || !format->is_number_integer() || format->get<long long>() != kCalibrationFormat)
    throw ConfigError(label, "$.moesim_calibration",
                      "the overlay format " + std::to_string(kCalibrationFormat) + " (written by moesim calibrate)" +
                          (format == doc.end() ? std::string(" (required key missing)")
                                               : "; got " + describe_json_value(*format)));
  const auto system = doc.find("system");
  if (system == doc.end() || !system->is_string())
    throw ConfigError(label, "$.system",
                      "the name in configs/systems/ the overlay calibrates" +
                          (system == doc.end() ? std::string(" (required key missing)")
                                               : "; got " + describe_json_value(*system)));
  for (const char* list : {"parameters", "warnings", "fits"})  // what the fit reports; read by people, not here
    if (const auto it = doc.find(list); it != doc.end() && !it->is_array())
      throw ConfigError(label, child_path("$", list), std::string("a list (what moesim calibrate reported); got ") +
                                                          describe_json_value(*it));
  if (const auto about = doc.find("about"); about != doc.end() && !about->is_string())
    throw ConfigError(label, "$.about", "a text; got " + describe_json_value(*about));
  const auto overrides = doc.find("overrides");
  if (overrides == doc.end() || !overrides->is_object())
    throw ConfigError(label, "$.overrides",
                      "an object {\"system\": {...}} of the keys the overlay sets" +
                          (overrides == doc.end() ? std::string(" (required key missing)")
                                                  : "; got " + describe_json_value(*overrides)));
  for (const auto& [name, value] : overrides->items())
    if (name != "system") throw ConfigError(label, child_path("$.overrides", name), "system (the only layer an overlay sets)");
  const auto system_overrides = overrides->find("system");
  if (system_overrides == overrides->end() || !system_overrides->is_object() || system_overrides->contains("base"))
    throw ConfigError(label, "$.overrides.system",
                      "an object of system keys and their \"sources\", without \"base\" (the overlay's \"system\" "
                      "names the file)");

  CalibrationOverlay overlay;
  overlay.file = file;
  overlay.system = system->get<std::string>();
  overlay.system_overrides = *system_overrides;
  collect_keys(overlay.system_overrides, "", overlay.keys);
  if (overlay.keys.empty()) throw ConfigError(label, "$.overrides.system", "at least one calibrated key");
  // The system must exist and the overrides must be valid over it, each with its source.
  config_file("systems", overlay.system, configs_dir, label, "$.system");
  load_system_at(overlay.system, ReferenceSite{label, "$.overrides.system", configs_dir, true},
                 overlay.system_overrides);
  return overlay;
}

const CalibrationOverlay* overlay_for(const std::string& system, const std::vector<CalibrationOverlay>& overlays) {
  const CalibrationOverlay* chosen = nullptr;
  for (const CalibrationOverlay& o : overlays) {
    if (o.system != system) continue;
    if (chosen)
      throw ConfigError(o.file.string(), "$.system",
                        "one overlay per system; " + chosen->file.string() + " calibrates " + system + " already");
    chosen = &o;
  }
  return chosen;
}

const CalibrationOverlay* apply_calibration(json& scenario, const std::vector<CalibrationOverlay>& overlays) {
  const std::string name = referenced_system(scenario);
  const CalibrationOverlay* chosen = overlay_for(name, overlays);
  if (!chosen) return nullptr;
  json layered = chosen->system_overrides;
  layered["base"] = name;
  json& ref = scenario["system"];
  if (ref.is_object()) {  // the scenario's own overrides win over the overlay's
    json own = ref;
    own.erase("base");
    layered = merge_overrides(layered, own);
  }
  ref = layered;
  return chosen;
}

}  // namespace moesim::config
