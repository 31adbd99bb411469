#pragma once
// References between configuration files: a name (the stem of configs/<kind>/<name>.json) or
// an object {"base": name, ...overrides} that patches the named file inline.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "reader.hpp"

namespace moesim::config {

// The folders of configs/ that files can be referenced from.
bool is_config_kind(const std::string& kind);

// configs_dir/kind/name.json. Raises ConfigError(label, path, ...) listing the available names
// when the name is not a plain file stem or the file does not exist.
std::filesystem::path config_file(const std::string& kind, const std::string& name,
                                  const std::filesystem::path& configs_dir,
                                  const std::string& label, const std::string& path);

// Overrides merged into a base document: objects merge key by key, recursively; anything
// else replaces. An override object with a "base" replaces the whole value (a new reference);
// one without "base" over a name keeps that name as its base (so {"gpu": {"hbm_gbytes": 100}}
// patches the system's own GPU).
nlohmann::json merge_overrides(nlohmann::json base, const nlohmann::json& overrides);

// Resolves the reference `ref` found at `path` of the file `label`: validates the referenced
// file alone (errors name that file), then, for an override object, the merged document
// (errors name `label` and paths under `path`). `name_out` receives the referenced name.
struct ReferenceSite {
  std::string label;
  std::string path;
  std::filesystem::path configs_dir;
  bool override_sources_required = false;  // the reference sits in a config file
};
void resolve_reference(const nlohmann::json& ref, const std::string& kind,
                       const ReferenceSite& site, const Body& body, std::string& name_out);

}  // namespace moesim::config
