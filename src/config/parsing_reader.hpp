#pragma once
// Reading one JSON document with a describe function (reader.hpp), strictly: unknown keys,
// wrong types, out-of-range values, missing required keys, broken rules and figures without a
// source all raise ConfigError(file, json path, expected).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "reader.hpp"

namespace moesim::config {

// Where a document comes from and which provenance rules apply to it.
struct DocumentContext {
  std::string label;                    // the file named in errors
  std::string root_path = "$";          // JSON path of the document inside that file
  std::filesystem::path configs_dir;    // where references are looked up
  // A config file read on its own: every numeric key present needs an entry in "sources".
  bool sources_required = false;
  // A merged document (base file + inline overrides): the overrides, without "base".
  const nlohmann::json* overrides = nullptr;
  // Overrides written inside a config file (not a scenario) are figures of that file and need
  // a source in the override object's own "sources".
  bool override_sources_required = false;
};

// Reads `document` (which must be a JSON object) with `body`, then checks the sources.
void parse_document(const nlohmann::json& document, const DocumentContext& context,
                    const Body& body);

// A JSON value as the error messages show it: its type and a short excerpt.
std::string describe_json_value(const nlohmann::json& value);

// "$.a.b" for identifiers, "$.a[\"x.y\"]" otherwise (JSONPath bracket notation).
std::string child_path(const std::string& parent, const std::string& key);

}  // namespace moesim::config
