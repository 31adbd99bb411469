#pragma once
// A sweep file: base scenario(s) and the points to run them at (format: docs/sweeps.md).
//
// Points are the cartesian product of an optional explicit list ("points", each with its own
// base scenario and fields) and the axes, in file order, the last axis varying fastest. Point
// indices follow that order; results, shards and merges are keyed by them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/strict_json.hpp"

namespace moesim::sweep {

// How a GPU-count axis grows the base scenario.
enum class GpuScaling {
  weak,    // driver::scaled_to: layout kept, global batch grows with DP
  strong,  // global batch kept, DP re-derived (fewer micro-batches per replica)
};
const char* to_string(GpuScaling s);

using FieldValues = std::vector<std::pair<std::string, nlohmann::json>>;  // dotted path -> value

// A base scenario file. Error messages (and so the results' reason column) name it as the sweep
// file does, so that outputs do not depend on the directory a sweep or a shard was run from.
struct ScenarioFile {
  std::filesystem::path path;          // resolved against the sweep file
  std::string name;                    // as written in the sweep file
  bool empty() const { return path.empty(); }
};

// One dimension of the product.
struct Axis {
  std::string name;                    // its column in the results
  std::string path;                    // dotted scenario path; empty on the GPU-count axis
  std::vector<nlohmann::json> values;
  bool gpu_count = false;              // values are GPU counts, applied by `scaling`
  GpuScaling scaling = GpuScaling::weak;
};

// One entry of the explicit "points" list.
struct ListedPoint {
  std::string label;
  ScenarioFile base;
  FieldValues set;
};

struct SweepSpec {
  std::string name;
  std::string description;
  std::filesystem::path file;
  ScenarioFile base;                   // sweep-wide base; a listed point's own base wins
  std::vector<ListedPoint> listed;     // empty: one implicit point, the sweep-wide base
  std::vector<Axis> axes;

  // Result columns that identify a point: "label" (with a "points" list), then the axes.
  std::vector<std::string> axis_columns() const;
  const Axis* gpu_axis() const;        // nullptr without one
};

// Where a patch was written: the sweep (or search) file and the JSON paths of its dotted path
// and of its value there, so that a scenario error the patch causes names them, not the base
// scenario (a typo in an axis path is the sweep file's).
struct PatchOrigin {
  std::string file;                    // the sweep file's name (outputs must not depend on where it ran)
  std::string key_at;                  // "$.axes[0].path", "$.points[1].set.layout.tp"
  std::string value_at;                // "$.axes[0].values[2]", "$.points[1].set.layout.tp"
};

// One simulation of the sweep.
struct Point {
  int index = 0;
  ScenarioFile base;
  FieldValues patches;                 // applied to the base scenario's JSON, in order
  std::vector<PatchOrigin> origins;    // of patches[i], where known (a search candidate's are not)
  std::optional<int> gpus;             // from the GPU-count axis
  GpuScaling scaling = GpuScaling::weak;
  std::vector<std::pair<std::string, nlohmann::json>> axis_values;  // column -> value
};

// Pieces of the sweep file that a search file shares, read as strictly (errors name the
// reader's file and `at`):
// a scenario file named relative to `referencing_file` ("the sweep file": its role in errors);
// it must exist and be JSON;
ScenarioFile scenario_file(const config::StrictJson& reader, const std::filesystem::path& referencing_file,
                           const std::string& referencing_role, const std::string& name, const std::string& at);
// a dotted scenario path ("layout.pp");
void check_scenario_path(const config::StrictJson& reader, const std::string& path, const std::string& at);
// a "set" object {"<dotted path>": <value>, ...}.
FieldValues field_values(const config::StrictJson& reader, const nlohmann::json& set, const std::string& at);

// Strict, like every configuration reader: unknown keys, wrong types, unreadable base
// scenarios and clashing column names are ConfigErrors naming the file and the JSON path.
SweepSpec load_sweep(const std::filesystem::path& file);
// The same for a document already parsed (config::parse_json_text): `file` is where it stands
// (base scenarios are named relative to it) and what its errors name.
SweepSpec load_sweep_json(const nlohmann::json& document, const std::filesystem::path& file);

std::vector<Point> expand(const SweepSpec& spec);

// How many points expand(spec) yields, counted without building one: the listed points (or 1)
// times every axis's size, saturating at batch::kCountSaturated.
std::uint64_t count_points(const SweepSpec& spec);
// The factors, for messages: "points 3, layout.tp 1000, gpus 4".
std::string point_factors(const SweepSpec& spec);

}  // namespace moesim::sweep
