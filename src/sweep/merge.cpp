// Merging shards: the rows of all parts, ordered by index, checked to be one sweep's points
// exactly once; the scaling efficiency is recomputed now that every reference row is present.
#include <fmt/format.h>

#include <algorithm>

#include "moesim/config/error.hpp"
#include "moesim/sweep/result.hpp"

namespace moesim::sweep {

namespace {

std::string index_list(const std::vector<int>& indices) {
  constexpr std::size_t kShown = 20;
  std::vector<int> shown(indices.begin(), indices.begin() + static_cast<long>(std::min(indices.size(), kShown)));
  return fmt::format("{}{}", fmt::join(shown, ", "), indices.size() > kShown ? ", ..." : "");
}

}  // namespace

SweepResult merge_results(const std::vector<SweepResult>& parts) {
  if (parts.empty()) throw ConfigError("merge", "$", "at least one sweep result");
  const SweepResult& first = parts.front();
  SweepResult out = first;
  out.shard.reset();
  out.rows.clear();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const SweepResult& p = parts[i];
    const bool same = p.name == first.name && p.description == first.description &&
                      p.point_count == first.point_count && p.axis_columns == first.axis_columns &&
                      p.gpu_column == first.gpu_column && p.gpu_scaling == first.gpu_scaling;
    if (!same)
      throw ConfigError(fmt::format("merge input {}", i + 1), "$",
                        fmt::format("a shard of the same sweep as input 1 (\"{}\", {} points, axes {}); got \"{}\", {} points, axes {}",
                                    first.name, first.point_count, fmt::join(first.axis_columns, ","), p.name,
                                    p.point_count, fmt::join(p.axis_columns, ",")));
    out.rows.insert(out.rows.end(), p.rows.begin(), p.rows.end());
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const Json& a, const Json& b) { return a["index"].get<int>() < b["index"].get<int>(); });
  std::vector<int> duplicated, missing;
  std::vector<int> seen(static_cast<std::size_t>(first.point_count), 0);
  for (const Json& row : out.rows) ++seen[row["index"].get<std::size_t>()];
  for (int i = 0; i < first.point_count; ++i) {
    if (seen[static_cast<std::size_t>(i)] == 0) missing.push_back(i);
    if (seen[static_cast<std::size_t>(i)] > 1) duplicated.push_back(i);
  }
  if (!duplicated.empty())
    throw ConfigError("merge", "$", "each point once; points " + index_list(duplicated) + " appear in more than one input");
  if (!missing.empty())
    throw ConfigError("merge", "$", fmt::format("all {} points of the sweep; points {} are in no input (a shard missing?)",
                                                first.point_count, index_list(missing)));
  fill_scaling_efficiency(out);
  return out;
}

}  // namespace moesim::sweep
