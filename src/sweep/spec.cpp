// Reading a sweep file. Strict in the way the scenario reader is: a typo in a sweep should stop
// it before hours of simulation, not turn every point into an error row.
#include "moesim/sweep/spec.hpp"

#include <fmt/format.h>

#include <set>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/config/strict_json.hpp"
#include "moesim/sweep/row.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// GPU counts: integers up to 2^24 (the scenario schema's bound on integers, config/reader.hpp).
constexpr long long kMaxGpuCount = 1 << 24;

class SweepReader : public config::StrictJson {
 public:
  explicit SweepReader(fs::path file) : StrictJson(file.string()), file_(std::move(file)) {}

  // Scenario files are named relative to the sweep file; they must exist and parse now.
  ScenarioFile scenario_file(const std::string& name, const std::string& at) const {
    return sweep::scenario_file(*this, file_, "the sweep file", name, at);
  }

  ListedPoint listed_point(const json& p, const std::string& at) const {
    allow_keys(p, at, {"label", "base", "set"});
    ListedPoint out;
    if (p.contains("base")) out.base = scenario_file(string_at(p, "base", at, true), at + ".base");
    out.label = string_at(p, "label", at, false);
    if (out.label.empty() && !out.base.empty()) out.label = out.base.path.stem().string();
    if (const auto it = p.find("set"); it != p.end()) out.set = field_values(*this, *it, at + ".set");
    return out;
  }

  Axis axis(const json& a, const std::string& at) const {
    Axis out;
    if (a.is_object() && a.contains("gpus")) {
      allow_keys(a, at, {"gpus", "mode", "name"});
      out.gpu_count = true;
      out.name = a.contains("name") ? string_at(a, "name", at, true) : "gpus";
      for (const json& n : array_at(a, "gpus", at)) {
        // Bounded as the scenario's integers are: a count beyond an int once ran the point at
        // its value modulo 2^32 while its row showed the count given (found by fuzzing).
        if (!n.is_number_integer() || n.get<long long>() <= 0 || n.get<long long>() > kMaxGpuCount)
          fail(at + ".gpus", fmt::format("a list of GPU counts from 1 to {}; got {}", kMaxGpuCount, n.dump()));
        out.values.push_back(n);
      }
      const std::string mode = a.contains("mode") ? string_at(a, "mode", at, true) : "weak";
      if (mode != "weak" && mode != "strong") fail(at + ".mode", "\"weak\" or \"strong\"; got \"" + mode + "\"");
      out.scaling = mode == "weak" ? GpuScaling::weak : GpuScaling::strong;
      return out;
    }
    allow_keys(a, at, {"path", "values", "name"});
    out.path = string_at(a, "path", at, true);
    check_scenario_path(*this, out.path, at + ".path");
    out.name = a.contains("name") ? string_at(a, "name", at, true) : out.path;
    if (!a.contains("values")) fail(at + ".values", "a non-empty list of values (required key missing)");
    for (const json& v : array_at(a, "values", at)) out.values.push_back(v);
    return out;
  }

 private:
  fs::path file_;
};

void check_columns(const SweepSpec& s, const SweepReader& r) {
  std::set<std::string> seen;
  std::set<std::string> labels;
  for (std::size_t i = 0; i < s.listed.size(); ++i)
    if (!labels.insert(s.listed[i].label).second)
      r.fail(fmt::format("$.points[{}].label", i), "a label used once; \"" + s.listed[i].label + "\" is used again");
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    const std::string& name = s.axes[i].name;
    if (is_fixed_column(name) || (name == "label" && !s.listed.empty()))
      r.fail(fmt::format("$.axes[{}].name", i), "a column name other than the result columns; \"" + name +
                                                     "\" is one of them (give the axis a \"name\")");
    if (!seen.insert(name).second)
      r.fail(fmt::format("$.axes[{}].name", i), "a column name used once; \"" + name + "\" is used again");
  }
  int gpu_axes = 0;
  for (const Axis& a : s.axes) gpu_axes += a.gpu_count ? 1 : 0;
  if (gpu_axes > 1) r.fail("$.axes", "at most one GPU-count axis ({\"gpus\": [...]})");
}

}  // namespace

ScenarioFile scenario_file(const config::StrictJson& reader, const fs::path& referencing_file,
                           const std::string& referencing_role, const std::string& name, const std::string& at) {
  const fs::path p = fs::path(name).is_absolute() ? fs::path(name) : referencing_file.parent_path() / name;
  if (!fs::is_regular_file(p))
    reader.fail(at, fmt::format("a scenario file, relative to {}; got \"{}\" (no such file: {})", referencing_role, name,
                                p.string()));
  config::read_json_file(p);
  return ScenarioFile{p.lexically_normal(), name};
}

void check_scenario_path(const config::StrictJson& reader, const std::string& path, const std::string& at) {
  bool ok = !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
  if (!ok) reader.fail(at, "a dotted scenario path such as \"layout.pp\"; got \"" + path + "\"");
}

FieldValues field_values(const config::StrictJson& reader, const json& set, const std::string& at) {
  if (!set.is_object()) reader.fail(at, "an object {\"<dotted path>\": <value>, ...}; got " + set.dump());
  FieldValues out;
  for (const auto& item : set.items()) {
    check_scenario_path(reader, item.key(), at + "." + item.key());
    out.emplace_back(item.key(), item.value());
  }
  return out;
}

const char* to_string(GpuScaling s) { return s == GpuScaling::weak ? "weak" : "strong"; }

std::vector<std::string> SweepSpec::axis_columns() const {
  std::vector<std::string> out;
  if (!listed.empty()) out.push_back("label");
  for (const Axis& a : axes) out.push_back(a.name);
  return out;
}

const Axis* SweepSpec::gpu_axis() const {
  for (const Axis& a : axes)
    if (a.gpu_count) return &a;
  return nullptr;
}

SweepSpec load_sweep(const fs::path& file) { return load_sweep_json(config::read_json_file(file), file); }

SweepSpec load_sweep_json(const json& j, const fs::path& file) {
  const SweepReader r(file);
  r.allow_keys(j, "$", {"name", "description", "base", "points", "axes"});
  SweepSpec s;
  s.file = file;
  s.name = r.string_at(j, "name", "$", true);
  s.description = r.string_at(j, "description", "$", false);
  if (j.contains("base")) s.base = r.scenario_file(r.string_at(j, "base", "$", true), "$.base");
  if (j.contains("points")) {
    const json& points = r.array_at(j, "points", "$");
    for (std::size_t i = 0; i < points.size(); ++i) {
      ListedPoint p = r.listed_point(points[i], fmt::format("$.points[{}]", i));
      if (p.base.empty() && s.base.empty())
        r.fail(fmt::format("$.points[{}].base", i), "a base scenario, here or sweep-wide (\"base\")");
      if (p.label.empty()) p.label = s.base.path.stem().string();
      s.listed.push_back(std::move(p));
    }
  } else if (s.base.empty()) {
    r.fail("$.base", "a base scenario file (required without a \"points\" list)");
  }
  if (j.contains("axes")) {
    const json& axes = r.array_at(j, "axes", "$");
    for (std::size_t i = 0; i < axes.size(); ++i) s.axes.push_back(r.axis(axes[i], fmt::format("$.axes[{}]", i)));
  }
  check_columns(s, r);
  return s;
}

}  // namespace moesim::sweep
