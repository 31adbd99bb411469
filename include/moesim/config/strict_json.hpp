#pragma once
// Checks for the small JSON inputs that are not configs (sweep files, the validation registry
// and experiments): every mistake a ConfigError naming the file, the JSON path and what was
// expected, as the schema readers do for configs.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "moesim/config/error.hpp"

namespace moesim::config {

class StrictJson {
 public:
  explicit StrictJson(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& expected) const {
    throw ConfigError(file_, at, expected);
  }

  // `obj` is an object whose keys are all in `allowed`.
  void allow_keys(const nlohmann::json& obj, const std::string& at, const std::vector<std::string>& allowed) const {
    if (!obj.is_object()) fail(at, "an object; got " + obj.dump());
    for (const auto& item : obj.items())
      if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
        fail(at + "." + item.key(), fmt::format("unknown key; allowed keys here: {}", fmt::join(allowed, ", ")));
  }

  const nlohmann::json& member(const nlohmann::json& obj, const std::string& key, const std::string& at) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at + "." + key, "a value (required key missing)");
    return *it;
  }

  // A non-empty string; "" when absent and not required.
  std::string string_at(const nlohmann::json& obj, const std::string& key, const std::string& at, bool required) const {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(at + "." + key, "a string (required key missing)");
      return "";
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty())
      fail(at + "." + key, "a non-empty string; got " + it->dump());
    return it->get<std::string>();
  }

  double number_at(const nlohmann::json& obj, const std::string& key, const std::string& at) const {
    const nlohmann::json& v = member(obj, key, at);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(at + "." + key, "a finite number; got " + v.dump());
    return v.get<double>();
  }

  const nlohmann::json& array_at(const nlohmann::json& obj, const std::string& key, const std::string& at) const {
    const nlohmann::json& v = member(obj, key, at);
    if (!v.is_array() || v.empty()) fail(at + "." + key, "a non-empty list; got " + v.dump());
    return v;
  }

  std::vector<std::string> strings_at(const nlohmann::json& obj, const std::string& key, const std::string& at) const {
    std::vector<std::string> out;
    const nlohmann::json& v = array_at(obj, key, at);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty())
        fail(fmt::format("{}.{}[{}]", at, key, i), "a non-empty string; got " + v[i].dump());
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace moesim::config
