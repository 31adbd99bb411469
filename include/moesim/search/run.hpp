#pragma once
// Running a search: every candidate of the space screened (rules, memory, estimate), the best
// estimates simulated in worker processes, the simulated ones ranked.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "moesim/batch/shard.hpp"
#include "moesim/batch/work_limit.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/platform/platform.hpp"
#include "moesim/search/result.hpp"
#include "moesim/search/space.hpp"
#include "moesim/search/spec.hpp"

namespace moesim::search {

struct SearchOptions {
  int jobs = 0;                          // workers at once; 0: available_cores()
  std::optional<int> simulate;           // overrides the file's "simulate"
  std::optional<batch::Shard> shard;     // absent: every planned simulation
  std::filesystem::path configs_dir;     // empty: found from the base scenario
  std::vector<config::CalibrationOverlay> calibration_overlays;  // --calibration
  platform::Fidelity fidelity = platform::Fidelity::folded;
  bool force = false;                    // screen a space beyond kMaxCandidates or this machine's memory
  // Called in this process: once the candidates are screened (result header filled, no rows
  // yet), and as each simulation finishes (completion order).
  std::function<void(const SearchResult&)> on_screened;
  // Called in this process as slices of the candidates are screened: done of total slices, and
  // how many candidates there are in all (progress of a long screening).
  std::function<void(int done, int total, int candidates)> on_screening;
  std::function<void(const Json& row)> on_simulated;
};

// The most candidates a search screens unless forced (docs/search.md): 50 times the default
// space of the record scenario (19,584), about 20 core-minutes of screening.
inline constexpr std::uint64_t kMaxCandidates = 1000000;
// Rough costs, measured on this project's 2-core machine: the candidate, its screening record
// and the vectors' growth (bytes); one candidate's rules, memory model and step estimate
// (core-seconds: docs/search.md's 19,584 candidates in 23.7 s on 2 cores). They size a refusal,
// not a prediction.
inline constexpr double kBytesPerCandidate = 1000;
inline constexpr double kCoreSecondsPerCandidate = 2.4e-3;

// The base scenario as a sweep point: its file, the search's "set" values, its GPU count. A
// candidate's simulation is this point with the candidate's settings patched in, read by the
// same strict reader as a scenario file (sweep::point_scenario).
sweep::Point base_point(const SearchSpec& spec);

// The space's size and cost, counted before a candidate is built (count_candidates).
batch::BatchEstimate estimate_search(const Space& space, int jobs);

// The result (rows, and hence every output) does not depend on `jobs`; a shard's rows are those
// of the planned candidates it owns (plan positions i, i+n, ...), and their merge equals the
// unsharded result. A space beyond kMaxCandidates or this machine's memory is refused
// (InfeasibleError, batch::refuse_oversized_batch) before its candidates are built, unless
// options.force.
SearchResult run_search(const SearchSpec& spec, const SearchOptions& options);

// Every file a search reads: the search file, the base scenario, the configs it references and
// the kernel calibration. Loading only: a check before any work.
std::vector<std::filesystem::path> input_files(const SearchSpec& spec, const SearchOptions& options);

// The same search on another system (the base's "system" replaced), named after it.
SearchSpec on_system(const SearchSpec& spec, const std::string& system);

}  // namespace moesim::search
