// Reading configs/fitted.json (the registry of fitted parameters) and
// configs/gap-experiments.json (each gap explanation with the override that tests it). Strict
// like every other reader: a typo names the file, the JSON path and what was expected.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"

namespace moesim::driver {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class StrictReader {
 public:
  explicit StrictReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& expected) const {
    throw ConfigError(file_, at, expected);
  }

  void allow_keys(const json& obj, const std::string& at, const std::vector<std::string>& allowed) const {
    if (!obj.is_object()) fail(at, "an object; got " + obj.dump());
    for (const auto& item : obj.items())
      if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
        fail(at + "." + item.key(), fmt::format("unknown key; allowed keys here: {}", fmt::join(allowed, ", ")));
  }

  const json& member(const json& obj, const std::string& key, const std::string& at) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at + "." + key, "a value (required key missing)");
    return *it;
  }

  std::string text(const json& obj, const std::string& key, const std::string& at) const {
    const json& v = member(obj, key, at);
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      fail(at + "." + key, "a non-empty string; got " + v.dump());
    return v.get<std::string>();
  }

  double number(const json& obj, const std::string& key, const std::string& at) const {
    const json& v = member(obj, key, at);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(at + "." + key, "a finite number; got " + v.dump());
    return v.get<double>();
  }

  const json& list(const json& obj, const std::string& key, const std::string& at) const {
    const json& v = member(obj, key, at);
    if (!v.is_array() || v.empty()) fail(at + "." + key, "a non-empty list; got " + v.dump());
    return v;
  }

  std::vector<std::string> texts(const json& obj, const std::string& key, const std::string& at) const {
    std::vector<std::string> out;
    const json& v = list(obj, key, at);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty())
        fail(fmt::format("{}.{}[{}]", at, key, i), "a non-empty string; got " + v[i].dump());
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

 private:
  std::string file_;
};

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
  const json& list = r.list(doc, "parameters", "$");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("$.parameters[{}]", i);
    const json& e = list[i];
    r.allow_keys(e, at, {"name", "values", "in", "fitted_to", "why_not_measured", "leave_one_out"});
    FittedParameter p;
    p.name = r.text(e, "name", at);
    const json& values = r.member(e, "values", at);
    if (!values.is_object() || values.empty()) r.fail(at + ".values", "an object {\"<key>\": <fitted value>, ...} with at least one key");
    for (const auto& item : values.items()) p.values.emplace_back(item.key(), r.number(values, item.key(), at + ".values"));
    p.locations = r.texts(e, "in", at);
    p.fitted_to = r.text(e, "fitted_to", at);
    p.why_not_measured = r.text(e, "why_not_measured", at);
    if (const auto loo = e.find("leave_one_out"); loo != e.end()) {
      const std::string la = at + ".leave_one_out";
      r.allow_keys(*loo, la, {"fitted_to", "value", "error"});
      p.loo_fitted_to = r.text(*loo, "fitted_to", la);
      if (loo->contains("value") != loo->contains("error"))
        r.fail(la, "both \"value\" and \"error\" (written by scripts/calibrate_history.py), or neither");
      if (loo->contains("value")) {
        p.loo_value = r.number(*loo, "value", la);
        p.loo_error = r.number(*loo, "error", la);
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
  const json& list = r.list(doc, "experiments", "$");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("$.experiments[{}]", i);
    const json& e = list[i];
    r.allow_keys(e, at, {"explanation", "rows", "set", "verdict"});
    GapExperiment g;
    g.explanation = r.text(e, "explanation", at);
    g.rows = r.texts(e, "rows", at);
    const json& set = r.member(e, "set", at);
    if (!set.is_object() || set.empty()) r.fail(at + ".set", "an object {\"<dotted scenario path>\": <value>, ...} with at least one key");
    for (const auto& item : set.items()) g.set.emplace_back(item.key(), item.value());
    const std::string verdict = r.text(e, "verdict", at);
    if (verdict != "supports" && verdict != "rejects")
      r.fail(at + ".verdict", "\"supports\" or \"rejects\" (what the experiment showed); got \"" + verdict + "\"");
    g.claimed_support = verdict == "supports";
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace moesim::driver
