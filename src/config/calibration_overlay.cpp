// Calibration overlays (moesim/config/calibration_overlay.hpp): read strictly, checked against
// the system they patch, and layered under a scenario's own overrides.
#include "moesim/config/calibration_overlay.hpp"

#include <utility>

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

// Every leaf an override layer sets, dotted under `prefix` ("nccl.nvlink_efficiency"), with its
// value; the "sources" of the layer and of the references inside it (the system's "gpu") are not
// keys.
void collect_leaves(const json& layer, const std::string& prefix, std::vector<std::pair<std::string, const json*>>& out) {
  for (const auto& [name, value] : layer.items()) {
    if (name == "sources" && value.is_object()) continue;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object()) collect_leaves(value, key, out);
    else out.emplace_back(key, &value);
  }
}

void collect_keys(const json& layer, const std::string& prefix, std::vector<std::string>& out) {
  std::vector<std::pair<std::string, const json*>> leaves;
  collect_leaves(layer, prefix, leaves);
  for (const auto& leaf : leaves) out.push_back(leaf.first);
}

// configs/<kind>/<name>.json with `overrides` merged in, checked at `site` (errors name it).
template <class Spec, class Describe>
Spec load_at(const std::string& kind, const std::string& name, const ReferenceSite& site, const json& overrides,
             Describe describe) {
  json ref = overrides;
  ref["base"] = name;
  Spec spec;
  std::string resolved;
  resolve_reference(ref, kind, site, [&](Reader& r) { describe(r, spec); }, resolved);
  return spec;
}

template <class Spec, class Describe>
Spec load_with(const std::string& kind, const std::string& name, const fs::path& configs_dir, const json& overrides,
               Describe describe) {
  const ReferenceSite site{(configs_dir / kind / (name + ".json")).string(), "$", configs_dir, false};
  return load_at<Spec>(kind, name, site, overrides, describe);
}

// The stack slots that name a dispatcher file (StackSpec::deepep_name, hybridep_name).
constexpr const char* kDispatcherSlots[] = {"deepep", "hybridep"};

// {"architectures": {"hopper": {"gemm": {"fixed_us": 8}}}, "sources": {"architectures.hopper.gemm.fixed_us":
// "..."}}: every leaf a number with its source; the values' ranges are the kernel file's own, checked
// where it is loaded (cost::load_calibration).
void read_kernels_layer(const json& layer, const std::string& label, CalibrationOverlay& overlay) {
  const std::string path = "$.overrides.kernels";
  if (!layer.is_object() || !layer.contains("architectures") || !layer["architectures"].is_object())
    throw ConfigError(label, path, "an object {\"architectures\": {...}, \"sources\": {...}} of keys of "
                                   "configs/calibration/kernels.json");
  for (const auto& [name, value] : layer.items())
    if (name != "architectures" && name != "sources")
      throw ConfigError(label, child_path(path, name), "architectures or sources (unknown key)");
  std::vector<std::pair<std::string, const json*>> leaves;
  collect_leaves(layer["architectures"], "architectures", leaves);
  const json sources = layer.value("sources", json::object());
  for (const auto& [key, at] : leaves) {
    if (!at->is_number())
      throw ConfigError(label, path + "." + key, "a number (a key of configs/calibration/kernels.json); got " +
                                                     describe_json_value(*at));
    const auto source = sources.find(key);
    if (source == sources.end() || !source->is_string() || source->get<std::string>().empty())
      throw ConfigError(label, path + ".sources", "an entry for " + key + " (every figure needs its source)");
    overlay.kernels[key] = at->get<double>();
    overlay.kernel_sources[key] = source->get<std::string>();
    overlay.keys.push_back("kernels." + key);
  }
}

}  // namespace

std::string referenced_name(const json& scenario, const char* kind) {
  const auto it = scenario.find(kind);
  if (it == scenario.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    const auto base = it->find("base");
    if (base != it->end() && base->is_string()) return base->get<std::string>();
  }
  return "";
}

SystemSpec load_system_with(const std::string& name, const fs::path& configs_dir, const json& overrides) {
  if (overrides.empty()) return load_system(name, configs_dir);
  return load_with<SystemSpec>("systems", name, configs_dir, overrides, describe_system);
}

StackSpec load_stack_with(const std::string& name, const fs::path& configs_dir, const json& overrides) {
  if (overrides.empty()) return load_stack(name, configs_dir);
  return load_with<StackSpec>("stacks", name, configs_dir, overrides, describe_stack);
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
                      "an object {\"system\": {...}, \"dispatchers\": {...}} of the keys the overlay sets" +
                          (overrides == doc.end() ? std::string(" (required key missing)")
                                                  : "; got " + describe_json_value(*overrides)));
  for (const auto& [name, value] : overrides->items())
    if (name != "system" && name != "dispatchers" && name != "kernels")
      throw ConfigError(label, child_path("$.overrides", name),
                        "system, dispatchers or kernels (the layers an overlay sets; unknown key)");

  CalibrationOverlay overlay;
  overlay.file = file;
  overlay.system = system->get<std::string>();
  config_file("systems", overlay.system, configs_dir, label, "$.system");
  // Each layer must be valid over the file it patches, each key with its source.
  if (const auto layer = overrides->find("system"); layer != overrides->end()) {
    if (!layer->is_object() || layer->contains("base"))
      throw ConfigError(label, "$.overrides.system",
                        "an object of system keys and their \"sources\", without \"base\" (the overlay's \"system\" "
                        "names the file)");
    overlay.system_overrides = *layer;
    collect_keys(overlay.system_overrides, "", overlay.keys);
    load_at<SystemSpec>("systems", overlay.system, ReferenceSite{label, "$.overrides.system", configs_dir, true},
                        overlay.system_overrides, describe_system);
  }
  if (const auto layer = overrides->find("dispatchers"); layer != overrides->end()) {
    if (!layer->is_object())
      throw ConfigError(label, "$.overrides.dispatchers",
                        "an object {<name in configs/dispatchers/>: {...keys and their \"sources\"}}; got " +
                            describe_json_value(*layer));
    for (const auto& [name, keys] : layer->items()) {
      const std::string path = child_path("$.overrides.dispatchers", name);
      config_file("dispatchers", name, configs_dir, label, path);
      if (!keys.is_object() || keys.contains("base"))
        throw ConfigError(label, path, "an object of dispatcher keys and their \"sources\", without \"base\"");
      collect_keys(keys, "dispatchers." + name, overlay.keys);
      load_at<EpDispatcherSpec>("dispatchers", name, ReferenceSite{label, path, configs_dir, true}, keys,
                                describe_dispatcher);
      overlay.dispatcher_overrides[name] = keys;
    }
  }
  if (const auto layer = overrides->find("kernels"); layer != overrides->end())
    read_kernels_layer(*layer, label, overlay);
  if (overlay.keys.empty()) throw ConfigError(label, "$.overrides", "at least one calibrated key");
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

json calibrated_stack_overrides(const CalibrationOverlay& overlay, const std::string& stack, const json& own,
                                const fs::path& configs_dir) {
  json out = own.is_object() ? own : json::object();
  if (overlay.dispatcher_overrides.empty()) return out;
  StackSpec spec;
  try {
    spec = load_stack_with(stack, configs_dir, out);  // the dispatchers as the scenario names them
  } catch (const ConfigError&) {
    return out;  // the scenario's own overrides are wrong: its own reading says where
  }
  for (const char* slot : kDispatcherSlots) {
    const std::string& name = std::string(slot) == "deepep" ? spec.deepep_name : spec.hybridep_name;
    const auto calibrated = overlay.dispatcher_overrides.find(name);
    if (calibrated == overlay.dispatcher_overrides.end()) continue;
    json layered = calibrated->second;
    layered["base"] = name;
    if (const auto mine = out.find(slot); mine != out.end() && mine->is_object()) {  // the scenario's own win
      json patch = *mine;
      patch.erase("base");
      layered = merge_overrides(layered, patch);
    }
    out[slot] = layered;
  }
  return out;
}

const CalibrationOverlay* apply_calibration(json& scenario, const std::vector<CalibrationOverlay>& overlays,
                                            const fs::path& configs_dir) {
  const std::string name = referenced_name(scenario, "system");
  const CalibrationOverlay* chosen = overlay_for(name, overlays);
  if (!chosen) return nullptr;
  // A reference as overrides of its base: the overlay's layer under the scenario's own keys.
  const auto own_overrides = [](const json& ref) {
    json own = ref.is_object() ? ref : json::object();
    own.erase("base");
    return own;
  };
  if (!chosen->system_overrides.empty()) {
    json& ref = scenario["system"];
    json layered = merge_overrides(chosen->system_overrides, own_overrides(ref));
    layered["base"] = name;
    ref = layered;
  }
  const std::string stack = referenced_name(scenario, "stack");
  if (!chosen->dispatcher_overrides.empty() && !stack.empty()) {
    json& ref = scenario["stack"];
    json layered = calibrated_stack_overrides(*chosen, stack, own_overrides(ref), configs_dir);
    layered["base"] = stack;
    ref = layered;
  }
  return chosen;
}

}  // namespace moesim::config
