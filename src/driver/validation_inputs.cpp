// Reading configs/fitted.json (the registry of fitted parameters) and
// configs/gap-experiments.json (each gap explanation with the override that tests it). Strict
// like every other reader: a typo names the file, the JSON path and what was expected.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/config/strict_json.hpp"
#include "moesim/driver/validate.hpp"

namespace moesim::driver {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using StrictReader = config::StrictJson;

// The JSON object at a dotted path ("" = the root), or nullptr.
const json* object_at(const json& root, const std::string& dotted) {
  const json* node = &root;
  std::size_t start = 0;
  while (!dotted.empty() && start <= dotted.size()) {
    const std::size_t end = dotted.find('.', start);
    const std::string key = dotted.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return node->is_object() ? node : nullptr;
}

// {"<key>": <number>, ...}, at least one key.
std::vector<std::pair<std::string, double>> numbers(const StrictReader& r, const json& obj, const std::string& at) {
  if (!obj.is_object() || obj.empty()) r.fail(at, "an object {\"<key>\": <number>, ...} with at least one key");
  std::vector<std::pair<std::string, double>> out;
  for (const auto& item : obj.items()) out.emplace_back(item.key(), r.number_at(obj, item.key(), at));
  return out;
}

// Each location must still hold the recorded value: a registry that drifted from the configs
// would label rows by a fit that is no longer there.
void check_locations(const StrictReader& r, const FittedParameter& p, const std::string& at, const fs::path& root) {
  for (std::size_t i = 0; i < p.locations.size(); ++i) {
    const std::string& loc = p.locations[i];
    const std::string where = fmt::format("{}.in[{}]", at, i);
    const std::size_t hash = loc.find('#');
    const fs::path file = root / loc.substr(0, hash);
    const std::string prefix = hash == std::string::npos ? "" : loc.substr(hash + 1);
    if (!fs::is_regular_file(file)) r.fail(where, "a file relative to the repository; no such file: " + file.string());
    const json doc = config::read_json_file(file);
    const json* obj = object_at(doc, prefix);
    if (!obj) r.fail(where, fmt::format("\"{}\" to name an object in {}; there is none", prefix, loc.substr(0, hash)));
    for (const auto& [key, value] : p.values) {
      const auto it = obj->find(key);
      const bool same = it != obj->end() && it->is_number() && std::abs(it->get<double>() - value) <= 1e-9 * std::abs(value);
      if (!same)
        r.fail(where, fmt::format("{} = {} at {} (the fitted value); it holds {}. Refit with scripts/calibrate_history.py, "
                                  "or remove this entry if the parameter is no longer fitted",
                                  key, value, loc, it == obj->end() ? std::string("nothing") : it->dump()));
    }
  }
}

}  // namespace

std::vector<FittedParameter> read_fitted(const fs::path& file, const fs::path& repo_root) {
  const StrictReader r(file.string());
  const json doc = config::read_json_file(file);
  r.allow_keys(doc, "$", {"about", "parameters"});
  std::vector<FittedParameter> out;
  const json& list = r.array_at(doc, "parameters", "$");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("$.parameters[{}]", i);
    const json& e = list[i];
    r.allow_keys(e, at, {"name", "values", "in", "fitted_to", "why_not_measured", "leave_one_out"});
    FittedParameter p;
    p.name = r.string_at(e, "name", at, true);
    p.values = numbers(r, r.member(e, "values", at), at + ".values");
    p.locations = r.strings_at(e, "in", at);
    p.fitted_to = r.string_at(e, "fitted_to", at, true);
    p.why_not_measured = r.string_at(e, "why_not_measured", at, true);
    if (const auto loo = e.find("leave_one_out"); loo != e.end()) {
      const std::string la = at + ".leave_one_out";
      r.allow_keys(*loo, la, {"fitted_to", "values", "error"});
      p.loo_fitted_to = r.string_at(*loo, "fitted_to", la, true);
      if (loo->contains("values") != loo->contains("error"))
        r.fail(la, "both \"values\" and \"error\" (written by scripts/calibrate_history.py), or neither");
      if (loo->contains("values")) {
        p.loo_values = numbers(r, r.member(*loo, "values", la), la + ".values");
        p.loo_error = r.number_at(*loo, "error", la);
      }
    }
    check_locations(r, p, at, repo_root);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GapExperiment> read_experiments(const fs::path& file) {
  const StrictReader r(file.string());
  const json doc = config::read_json_file(file);
  r.allow_keys(doc, "$", {"about", "experiments"});
  std::vector<GapExperiment> out;
  const json& list = r.array_at(doc, "experiments", "$");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("$.experiments[{}]", i);
    const json& e = list[i];
    r.allow_keys(e, at, {"explanation", "rows", "set", "verdict"});
    GapExperiment g;
    g.explanation = r.string_at(e, "explanation", at, true);
    g.rows = r.strings_at(e, "rows", at);
    const json& set = r.member(e, "set", at);
    if (!set.is_object() || set.empty()) r.fail(at + ".set", "an object {\"<dotted scenario path>\": <value>, ...} with at least one key");
    for (const auto& item : set.items()) g.set.emplace_back(item.key(), item.value());
    const std::string verdict = r.string_at(e, "verdict", at, true);
    if (verdict != "supports" && verdict != "rejects")
      r.fail(at + ".verdict", "\"supports\" or \"rejects\" (what the experiment showed); got \"" + verdict + "\"");
    g.claimed_support = verdict == "supports";
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace moesim::driver
