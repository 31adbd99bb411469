// Reading a search file. Strict like the sweep reader: a typo must stop the search before it
// evaluates thousands of candidates, not silently drop an axis.
#include "moesim/search/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "moesim/config/choices.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/config/strict_json.hpp"

namespace moesim::search {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Degrees and sizes: integers up to 2^24 (the scenario schema's bound).
constexpr int kMaxInteger = 1 << 24;

class SearchReader : public config::StrictJson {
 public:
  using StrictJson::StrictJson;

  // A non-empty list of distinct values read by `one` (which gets the value and its path).
  template <typename T, typename Read>
  std::vector<T> list(const json& obj, const std::string& key, const std::string& at, Read one) const {
    const json& v = array_at(obj, key, at);
    std::vector<T> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string where = fmt::format("{}.{}[{}]", at, key, i);
      T value = one(v[i], where);
      if (std::find(out.begin(), out.end(), value) != out.end()) fail(where, "each value once; " + v[i].dump() + " is repeated");
      out.push_back(std::move(value));
    }
    return out;
  }

  std::vector<int> integers(const json& obj, const std::string& key, const std::string& at) const {
    return list<int>(obj, key, at, [&](const json& v, const std::string& where) {
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxInteger)
        fail(where, fmt::format("an integer from 1 to {}; got {}", kMaxInteger, v.dump()));
      return v.get<int>();
    });
  }

  std::vector<bool> booleans(const json& obj, const std::string& key, const std::string& at) const {
    return list<bool>(obj, key, at, [&](const json& v, const std::string& where) {
      if (!v.is_boolean()) fail(where, "true or false; got " + v.dump());
      return v.get<bool>();
    });
  }

  // Strings, from `allowed` when it is not empty.
  std::vector<std::string> strings(const json& obj, const std::string& key, const std::string& at,
                                   const std::vector<std::string>& allowed, bool may_be_empty = false) const {
    return list<std::string>(obj, key, at, [&](const json& v, const std::string& where) {
      if (!v.is_string() || (!may_be_empty && v.get_ref<const std::string&>().empty()))
        fail(where, std::string(may_be_empty ? "a string" : "a non-empty string") + "; got " + v.dump());
      const std::string s = v.get<std::string>();
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
        fail(where, fmt::format("one of {}; got \"{}\"", fmt::join(allowed, ", "), s));
      return s;
    });
  }

  // Sets of recompute modules: each a list of distinct known modules, compared as sets.
  std::vector<std::vector<std::string>> module_sets(const json& obj, const std::string& key, const std::string& at) const {
    return list<std::vector<std::string>>(obj, key, at, [&](const json& v, const std::string& where) {
      if (!v.is_array()) fail(where, "a list of recompute modules ([] for none); got " + v.dump());
      std::vector<std::string> modules;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string item_at = fmt::format("{}[{}]", where, i);
        const auto& known = config::recompute_modules();
        if (!v[i].is_string() || std::find(known.begin(), known.end(), v[i].get<std::string>()) == known.end())
          fail(item_at, fmt::format("a recompute module, one of {}; got {}", fmt::join(known, ", "), v[i].dump()));
        if (std::find(modules.begin(), modules.end(), v[i].get<std::string>()) != modules.end())
          fail(item_at, "each module once; " + v[i].dump() + " is repeated");
        modules.push_back(v[i].get<std::string>());
      }
      std::sort(modules.begin(), modules.end());
      return modules;
    });
  }

  SpaceSpec space(const json& j, const std::string& at) const {
    allow_keys(j, at, {"layout", "training", "recipe"});
    SpaceSpec s;
    if (const auto it = j.find("layout"); it != j.end()) {
      const std::string a = at + ".layout";
      allow_keys(*it, a, {"tp", "pp", "vpp", "ep", "etp", "cp", "schedule", "pipeline_layout", "sharding"});
      for (auto [name, axis] : {std::pair{"tp", &s.tp}, {"pp", &s.pp}, {"vpp", &s.vpp}, {"ep", &s.ep},
                                {"etp", &s.etp}, {"cp", &s.cp}})
        if (it->contains(name)) *axis = integers(*it, name, a);
      if (it->contains("schedule")) s.schedule = strings(*it, "schedule", a, pipeline_schedule_names());
      if (it->contains("pipeline_layout")) s.pipeline_layout = strings(*it, "pipeline_layout", a, {}, true);
      // Whether the stack offers them is checked against the base scenario's stack (space.cpp).
      if (it->contains("sharding")) s.sharding = strings(*it, "sharding", a, {"optimizer", "fsdp"});
    }
    if (const auto it = j.find("training"); it != j.end()) {
      allow_keys(*it, at + ".training", {"micro_batch"});
      if (it->contains("micro_batch")) s.micro_batch = integers(*it, "micro_batch", at + ".training");
    }
    if (const auto it = j.find("recipe"); it != j.end()) {
      const std::string a = at + ".recipe";
      allow_keys(*it, a, {"recompute", "ep_overlap", "delay_wgrad", "dispatcher", "cuda_graphs"});
      if (it->contains("recompute")) s.recompute = module_sets(*it, "recompute", a);
      if (it->contains("ep_overlap")) s.ep_overlap = booleans(*it, "ep_overlap", a);
      if (it->contains("delay_wgrad")) s.delay_wgrad = booleans(*it, "delay_wgrad", a);
      // Whether the stack offers them is checked against the base scenario's stack (space.cpp).
      if (it->contains("dispatcher")) s.dispatcher = strings(*it, "dispatcher", a, {});
      if (it->contains("cuda_graphs")) s.cuda_graphs = strings(*it, "cuda_graphs", a, {});
    }
    return s;
  }
};

}  // namespace

SearchSpec load_search(const fs::path& file) { return load_search_json(config::read_json_file(file), file); }

SearchSpec load_search_json(const json& j, const fs::path& file) {
  const SearchReader r(file.string());
  r.allow_keys(j, "$", {"name", "description", "base", "gpus", "set", "space", "simulate"});
  SearchSpec s;
  s.file = file;
  s.name = r.string_at(j, "name", "$", true);
  s.description = r.string_at(j, "description", "$", false);
  s.base = sweep::scenario_file(r, file, "the search file", r.string_at(j, "base", "$", true), "$.base");
  if (const auto it = j.find("gpus"); it != j.end()) {
    if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > kMaxInteger)
      r.fail("$.gpus", fmt::format("a GPU count from 1 to {}; got {}", kMaxInteger, it->dump()));
    s.gpus = it->get<int>();
  }
  if (const auto it = j.find("set"); it != j.end()) s.set = sweep::field_values(r, *it, "$.set");
  for (const auto& [path, value] : s.set) s.set_origins.push_back({file.filename().string(), "$.set." + path, "$.set." + path});
  if (const auto it = j.find("space"); it != j.end()) s.space = r.space(*it, "$.space");
  if (const auto it = j.find("simulate"); it != j.end()) {
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > kMaxInteger)
      r.fail("$.simulate", "the number of candidates to simulate, 0 or more; got " + it->dump());
    s.simulate = it->get<int>();
  }
  return s;
}

}  // namespace moesim::search
