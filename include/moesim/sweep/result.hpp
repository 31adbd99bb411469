#pragma once
// The results of a sweep, or of one shard of it, as written to sweep.json. Everything the
// other outputs (CSV, Markdown, plots) show is derived from this alone, which is what makes a
// merge of shards equal to the unsharded run byte for byte.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "moesim/sweep/row.hpp"
#include "moesim/sweep/shard.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

struct SweepResult {
  std::string name;
  std::string description;
  int point_count = 0;                    // of the whole sweep, whatever the shard
  std::vector<std::string> axis_columns;  // see SweepSpec::axis_columns
  std::string gpu_column;                 // the GPU-count axis' column; "" without one
  std::string gpu_scaling;                // "weak" / "strong"; "" without a GPU-count axis
  std::optional<Shard> shard;             // absent: all points (a full run or a merge)
  std::vector<Json> rows;                 // ascending index

  bool complete() const { return static_cast<int>(rows.size()) == point_count; }
};

// The result's header for a sweep, with no rows yet.
SweepResult empty_result(const SweepSpec& spec, int point_count, const std::optional<Shard>& shard);

// The row's values on every axis but the GPU-count one: rows with equal values form a series
// (one scaling curve).
Json series_values(const SweepResult& r, const Json& row);

// Per-GPU throughput of each row relative to the first row of its series: rows equal on every
// axis but the GPU-count one (docs/method.md, "Metrics"). Only on complete results, so that a shard never
// reports a ratio against a different reference than the whole sweep would.
void fill_scaling_efficiency(SweepResult& r);

Json to_json(const SweepResult& r);
// `label` names the source in errors. Throws ConfigError on anything but a sweep result.
SweepResult result_from_json(const Json& j, const std::string& label);
// A sweep.json file, or a directory holding one.
SweepResult read_result(const std::filesystem::path& file_or_dir);

// Combines shards of one sweep; every point exactly once. ConfigError naming what is missing,
// duplicated or from another sweep.
SweepResult merge_results(const std::vector<SweepResult>& parts);

}  // namespace moesim::sweep
