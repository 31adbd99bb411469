// Building a point's scenario: JSON patches first (so the strict reader validates them like a
// hand-written file), then the GPU count on the parsed scenario (weak scaling needs the base's
// GPU count and global batch, which only the parsed scenario has resolved).
#include "moesim/sweep/point.hpp"

#include <fmt/format.h>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/run.hpp"

namespace moesim::sweep {

using nlohmann::json;

void set_at_path(json& scenario, const std::string& path, const json& value, const std::string& label) {
  json* node = &scenario;
  std::string at = "$";
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_string()) *node = json{{"base", *node}};  // a reference by name, now overridden
    if (node->is_null()) *node = json::object();
    if (!node->is_object())
      throw ConfigError(label, at, fmt::format("an object to set \"{}\" in (sweep path \"{}\"); got {}", key, path, node->dump()));
    node = &(*node)[key];
    at += "." + key;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  *node = value;
}

namespace {

Scenario strong_scaled(const Scenario& s, int gpus) {
  Scenario out = s;
  out.gpus = gpus;
  out.layout.dp = 0;  // re-derived; the global batch stays, so each replica gets fewer micro-batches
  out.name = fmt::format("{} @ {} GPUs (strong)", s.name, gpus);
  out.published.reset();  // the published figure belongs to the original size
  return out;
}

// Whether JSON path `path` is `prefix` or inside it.
bool at_or_under(const std::string& path, const std::string& prefix) {
  return path == prefix || path.rfind(prefix + ".", 0) == 0 || path.rfind(prefix + "[", 0) == 0;
}

ConfigError blamed_on_key(const PatchOrigin& o, const std::string& path, const ConfigError& e) {
  return ConfigError(o.file, o.key_at, fmt::format("a dotted path to a key of the scenario; \"{}\" is not one ({}: {}: {})",
                                                   path, e.file(), e.json_path(), e.expected()));
}

// A scenario error at a path a patch sets is that patch's (the last one there wins): a misspelt
// key on its path is the path's fault, anything at or under its value the value's. Errors of
// other files (a referenced config) and of patches without an origin stay as they are.
ConfigError blamed_on_patch(const ConfigError& e, const Point& p, const std::string& label) {
  if (e.file() != label) return e;
  const bool unknown_key = e.expected().rfind("unknown key", 0) == 0;
  for (std::size_t k = p.patches.size(); k-- > 0;) {
    const std::string& path = p.patches[k].first;
    const std::string set_at = "$." + path;
    const bool key = unknown_key && at_or_under(set_at, e.json_path());
    if (!key && !at_or_under(e.json_path(), set_at)) continue;
    if (k >= p.origins.size()) return e;
    const PatchOrigin& o = p.origins[k];
    if (key) return blamed_on_key(o, path, e);
    return ConfigError(o.file, o.value_at, fmt::format("a value the scenario accepts at \"{}\" ({}: {}: {})", path,
                                                       e.file(), e.json_path(), e.expected()));
  }
  return e;
}

}  // namespace

Scenario point_scenario(const Point& p, const std::filesystem::path& configs_dir,
                        const std::vector<config::CalibrationOverlay>& overlays) {
  json j = config::read_json_file(p.base.path);
  const std::string label = p.base.name.empty() ? p.base.path.string() : p.base.name;
  for (std::size_t k = 0; k < p.patches.size(); ++k) {
    try {
      set_at_path(j, p.patches[k].first, p.patches[k].second, label);
    } catch (const ConfigError& e) {  // the path crosses a number or a list: the path's fault
      if (k < p.origins.size()) throw blamed_on_key(p.origins[k], p.patches[k].first, e);
      throw;
    }
  }
  config::LoadOptions lo;
  lo.configs_dir = configs_dir.empty() ? config::find_configs_dir(p.base.path) : configs_dir;
  lo.calibrations = overlays;
  Scenario s;
  try {
    s = config::load_scenario_json(j, label, lo);
  } catch (const ConfigError& e) {
    throw blamed_on_patch(e, p, label);
  }
  s.file = p.base.path.string();  // the label may be relative to the sweep file; the engine needs the file
  if (!p.gpus) return s;
  if (*p.gpus > s.system.max_gpus)
    throw InfeasibleError(fmt::format("{} GPUs: {} holds at most {} (max_gpus of the system)", *p.gpus,
                                      s.system.name, s.system.max_gpus));
  return p.scaling == GpuScaling::weak ? driver::scaled_to(s, *p.gpus) : strong_scaled(s, *p.gpus);
}

}  // namespace moesim::sweep
