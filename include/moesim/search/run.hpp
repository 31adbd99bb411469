#pragma once
// Running a search: every candidate of the space screened (rules, memory, estimate), the best
// estimates simulated in worker processes, the simulated ones ranked.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "moesim/batch/shard.hpp"
#include "moesim/platform/platform.hpp"
#include "moesim/search/result.hpp"
#include "moesim/search/spec.hpp"

namespace moesim::search {

struct SearchOptions {
  int jobs = 0;                          // workers at once; 0: available_cores()
  std::optional<int> simulate;           // overrides the file's "simulate"
  std::optional<batch::Shard> shard;     // absent: every planned simulation
  std::filesystem::path configs_dir;     // empty: found from the base scenario
  platform::Fidelity fidelity = platform::Fidelity::folded;
  // Called in this process: once the candidates are screened (result header filled, no rows
  // yet), and as each simulation finishes (completion order).
  std::function<void(const SearchResult&)> on_screened;
  // Called in this process as slices of the candidates are screened: done of total slices, and
  // how many candidates there are in all (progress of a long screening).
  std::function<void(int done, int total, int candidates)> on_screening;
  std::function<void(const Json& row)> on_simulated;
};

// The result (rows, and hence every output) does not depend on `jobs`; a shard's rows are those
// of the planned candidates it owns (plan positions i, i+n, ...), and their merge equals the
// unsharded result.
SearchResult run_search(const SearchSpec& spec, const SearchOptions& options);

// Every file a search reads: the search file, the base scenario, the configs it references and
// the kernel calibration. Loading only: a check before any work.
std::vector<std::filesystem::path> input_files(const SearchSpec& spec, const SearchOptions& options);

// The same search on another system (the base's "system" replaced), named after it.
SearchSpec on_system(const SearchSpec& spec, const std::string& system);

}  // namespace moesim::search
