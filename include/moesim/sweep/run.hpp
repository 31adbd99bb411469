#pragma once
// Running a sweep: every point (of this shard) in worker processes, results by point index.
#include <filesystem>
#include <functional>
#include <optional>

#include "moesim/platform/platform.hpp"
#include "moesim/sweep/result.hpp"
#include "moesim/sweep/shard.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

struct SweepOptions {
  int jobs = 0;                        // workers at once; 0: available_cores()
  std::optional<Shard> shard;          // absent: every point
  std::filesystem::path configs_dir;   // empty: found from each base scenario
  platform::Fidelity fidelity = platform::Fidelity::folded;
  int samples = 1;                     // seeds per point (sweep/samples.hpp)
  // Called in this process as each point finishes (completion order): progress reporting.
  std::function<void(const Json& row)> on_point;
};

// Invalid and infeasible points are rows saying why; only unexpected failures are "error" rows.
// The result (rows, and hence every output) does not depend on `jobs`.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options);

// One point (at sample `sample`: seed + sample) in this process (it forks only for the
// simulation itself).
Json run_point(const Point& p, const SweepOptions& options, int sample = 0);

}  // namespace moesim::sweep
