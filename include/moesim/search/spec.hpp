#pragma once
// A search file: a base scenario (system, GPU count, model, stack, training) and the space of
// layouts and recipe settings to explore in it (format: docs/search.md). An axis the file leaves
// out gets its default from the base scenario (space.hpp).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "moesim/sweep/spec.hpp"

namespace moesim::search {

// The axes as the file gives them; absent = the default.
struct SpaceSpec {
  std::optional<std::vector<int>> tp, pp, vpp, ep, etp, cp, micro_batch;
  std::optional<std::vector<std::string>> schedule;
  std::optional<std::vector<std::string>> pipeline_layout;  // "" = generated, balanced
  std::optional<std::vector<std::string>> sharding;         // layout.sharding strategies
  std::optional<std::vector<std::vector<std::string>>> recompute;
  std::optional<std::vector<bool>> ep_overlap, delay_wgrad;
  std::optional<std::vector<std::string>> dispatcher, cuda_graphs;
};

inline constexpr int kDefaultSimulated = 50;

struct SearchSpec {
  std::string name;
  std::string description;
  std::filesystem::path file;
  sweep::ScenarioFile base;
  sweep::FieldValues set;            // dotted scenario paths set on the base first
  std::vector<sweep::PatchOrigin> set_origins;  // where each of `set` was given (its errors name it)
  std::optional<int> gpus;           // the base weak-scaled to this many GPUs (as `run --gpus`)
  SpaceSpec space;
  int simulate = kDefaultSimulated;  // candidates simulated, best estimate first
};

// Strict: unknown keys, wrong types, values outside their range or unknown to the schema
// (recompute modules, schedules) are ConfigErrors naming the file and the JSON path.
SearchSpec load_search(const std::filesystem::path& file);
// The same for a document already parsed (config::parse_json_text): `file` is where it stands
// (its base scenario is named relative to it) and what its errors name.
SearchSpec load_search_json(const nlohmann::json& document, const std::filesystem::path& file);

}  // namespace moesim::search
