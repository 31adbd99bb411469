#include "references.hpp"

#include <algorithm>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "parsing_reader.hpp"
#include "text.hpp"

namespace moesim::config {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_config_kind(const std::string& kind) {
  return kind == "hardware" || kind == "systems" || kind == "models" || kind == "stacks" || kind == "dispatchers";
}

std::vector<std::string> list_configs(const fs::path& configs_dir, const std::string& kind) {
  if (!is_config_kind(kind))
    throw std::invalid_argument("list_configs: kind \"" + kind + "\" is not hardware, systems, models, stacks or dispatchers");
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(configs_dir / kind, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_error;  // a link that loops or dangles is no config file: left out, not a crash
    if (it->is_regular_file(entry_error) && it->path().extension() == ".json")
      names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A file stem: no folders, no hidden files, nothing a shell or a path would read differently.
bool plain_name(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Reads configs/<kind>/<name>.json and validates it on its own: its errors name that file.
json load_base(const std::string& kind, const std::string& name, const ReferenceSite& site,
               const std::string& path, const Body& body) {
  const fs::path file = config_file(kind, name, site.configs_dir, site.label, path);
  json document = read_json_file(file);
  DocumentContext alone;
  alone.label = file.string();
  alone.configs_dir = site.configs_dir;
  alone.sources_required = true;
  parse_document(document, alone, body);
  return document;
}

}  // namespace

fs::path config_file(const std::string& kind, const std::string& name, const fs::path& configs_dir,
                     const std::string& label, const std::string& path) {
  const auto available = list_configs(configs_dir, kind);
  const std::string expected = "a name in " + (configs_dir / kind).string() + "/ (available: " +
                               (available.empty() ? std::string("none") : join(available)) + ")";
  if (!plain_name(name))
    throw ConfigError(label, path, expected + "; got " + json(name).dump() + " (not a plain file name)");
  const fs::path file = configs_dir / kind / (name + ".json");
  std::error_code ec;  // a name longer than the file system allows is "no such file", not a crash
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(label, path, expected + "; got " + json(name).dump() +
                                       (ec == std::errc::too_many_symbolic_link_levels
                                            ? " (" + file.string() + " is a symbolic link that loops)"
                                            : " (no such file)"));
  return file;
}

json merge_overrides(json base, const json& overrides) {
  for (const auto& [name, value] : overrides.items()) {
    const auto it = base.find(name);
    if (it == base.end() || !value.is_object() || value.contains("base")) {
      base[name] = value;
    } else if (it->is_object()) {
      *it = merge_overrides(*it, value);
    } else if (it->is_string()) {
      *it = merge_overrides(json{{"base", *it}}, value);  // patch the referenced file
    } else {
      *it = value;
    }
  }
  return base;
}

void resolve_reference(const json& ref, const std::string& kind, const ReferenceSite& site,
                       const Body& body, std::string& name_out) {
  if (ref.is_string()) {
    name_out = ref.get<std::string>();
    load_base(kind, name_out, site, site.path, body);
    return;
  }
  if (!ref.is_object())
    throw ConfigError(site.label, site.path,
                      "a name in configs/" + kind + "/ or an object {\"base\": <name>, <key>: <override>, ...}; got " +
                          describe_json_value(ref) + " (wrong type)");
  const std::string base_path = child_path(site.path, "base");
  const auto base_name = ref.find("base");
  if (base_name == ref.end())
    throw ConfigError(site.label, base_path,
                      "the name of the file in configs/" + kind + "/ that the overrides patch (required key missing)");
  if (!base_name->is_string())
    throw ConfigError(site.label, base_path,
                      "a name in configs/" + kind + "/; got " + describe_json_value(*base_name) + " (wrong type)");
  name_out = base_name->get<std::string>();
  const json base = load_base(kind, name_out, site, base_path, body);

  json overrides = ref;
  overrides.erase("base");
  DocumentContext merged;
  merged.label = site.label;
  merged.root_path = site.path;
  merged.configs_dir = site.configs_dir;
  merged.overrides = &overrides;
  merged.override_sources_required = site.override_sources_required;
  parse_document(merge_overrides(base, overrides), merged, body);
}

}  // namespace moesim::config
