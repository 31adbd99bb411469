// configs/reliability/<name>.json: a cluster's published interruption counts over its exposure,
// recovery times and checkpoint bandwidth. Every figure is checked where it is read, and an error
// names the file, the JSON path and what was expected (exit 2).
#include <fmt/format.h>

#include <cmath>

#include "moesim/campaign/campaign.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"

namespace moesim::campaign {

namespace {

using nlohmann::json;

double positive(const json& doc, const std::string& file, const std::string& key, double at_most, bool zero_ok = false) {
  const std::string path = "$." + key;
  if (!doc.contains(key)) throw ConfigError(file, path, "a number (this key is required)");
  const json& v = doc.at(key);
  const bool number = v.is_number();
  const double x = number ? v.get<double>() : 0;
  if (!number || !std::isfinite(x) || x < 0 || (x == 0 && !zero_ok) || x > at_most)
    throw ConfigError(file, path, fmt::format("a number {} {} and at most {}", zero_ok ? ">=" : ">", 0, at_most));
  return x;
}

// A finite number in [0, at_most] at `where`, or the error saying `expected`.
double bounded(const json& v, const std::string& file, const std::string& where, double at_most,
               const std::string& expected) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > at_most)
    throw ConfigError(file, where, expected);
  return v.get<double>();
}

}  // namespace

double ReliabilitySpec::per_gpu_hour() const {
  double sum = 0;
  for (const FailureCause& c : causes) sum += c.per_gpu_hour;
  return sum;
}

ReliabilitySpec load_reliability(const std::string& name_or_file, const std::filesystem::path& configs_dir) {
  const bool path = name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".json");
  const std::filesystem::path file = path ? std::filesystem::path(name_or_file)
                                          : configs_dir / "reliability" / (name_or_file + ".json");
  const json doc = config::read_json_file(file);
  const std::string f = file.string();
  if (!doc.is_object()) throw ConfigError(f, "$", "a JSON object");
  ReliabilitySpec r;
  r.file = f;
  if (!doc.contains("name") || !doc.at("name").is_string()) throw ConfigError(f, "$.name", "a string");
  r.name = doc.at("name").get<std::string>();
  // The published counts over the exposure they were counted in: the rates stay traceable.
  const double gpu_hours = positive(doc, f, "exposure_gpu_hours", 1e15);
  if (!doc.contains("interruptions") || !doc.at("interruptions").is_object() || doc.at("interruptions").empty())
    throw ConfigError(f, "$.interruptions", "an object of interruption counts by cause, e.g. {\"faulty GPU\": 148}");
  for (const auto& [cause, count] : doc.at("interruptions").items()) {
    const std::string where = "$.interruptions[\"" + cause + "\"]";
    bounded(count, f, where, 1e9, "a count of interruptions, a number >= 0 and at most 1e9");
    r.causes.push_back({cause, count.get<double>() / gpu_hours});
  }
  r.detection_s = positive(doc, f, "detection_s", 86400, true);
  r.restart_s = positive(doc, f, "restart_s", 86400, true);
  r.storage_write_bytes_per_s = positive(doc, f, "storage_write_tbytes_per_s", 1e4) * 1e12;
  r.storage_read_bytes_per_s = positive(doc, f, "storage_read_tbytes_per_s", 1e4) * 1e12;
  // Optional, each checked where it is read and required only by the option that uses it.
  if (doc.contains("detection_s_by_cause")) {
    const json& by = doc.at("detection_s_by_cause");
    if (!by.is_object()) throw ConfigError(f, "$.detection_s_by_cause", "an object of cause -> detection seconds");
    for (const auto& [cause, seconds] : by.items()) {
      const std::string where = "$.detection_s_by_cause[\"" + cause + "\"]";
      if (!doc.at("interruptions").contains(cause))
        throw ConfigError(f, where, "a cause named in $.interruptions");
      r.detection_s_by_cause[cause] = bounded(seconds, f, where, 86400, "a number >= 0 and at most 86400 (seconds)");
    }
  }
  if (doc.contains("causes_keeping_nodes")) {
    const json& keeping = doc.at("causes_keeping_nodes");
    if (!keeping.is_array()) throw ConfigError(f, "$.causes_keeping_nodes", "an array of causes named in $.interruptions");
    for (std::size_t i = 0; i < keeping.size(); ++i) {
      const json& cause = keeping[i];
      if (!cause.is_string() || !doc.at("interruptions").contains(cause.get<std::string>()))
        throw ConfigError(f, fmt::format("$.causes_keeping_nodes[{}]", i), "a cause named in $.interruptions");
      r.causes_keeping_nodes.push_back(cause.get<std::string>());
    }
  }
  if (doc.contains("warm_restart_s")) r.warm_restart_s = positive(doc, f, "warm_restart_s", 86400);
  if (doc.contains("node_repair_s")) r.node_repair_s = positive(doc, f, "node_repair_s", 1e8);
  if (doc.contains("async_drain_slowdown")) r.async_drain_slowdown = positive(doc, f, "async_drain_slowdown", 10, true);
  if (doc.contains("sources")) {
    if (!doc.at("sources").is_object()) throw ConfigError(f, "$.sources", "an object of setting -> source");
    for (const auto& [k, v] : doc.at("sources").items())
      if (v.is_string()) r.sources[k] = v.get<std::string>();
  }
  return r;
}

}  // namespace moesim::campaign
