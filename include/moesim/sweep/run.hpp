#pragma once
// Running a sweep: every point (of this shard) in worker processes, results by point index.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "moesim/batch/work_limit.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/platform/platform.hpp"
#include "moesim/sweep/result.hpp"
#include "moesim/sweep/shard.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

struct SweepOptions {
  int jobs = 0;                        // workers at once; 0: available_cores()
  std::optional<Shard> shard;          // absent: every point
  std::filesystem::path configs_dir;   // empty: found from each base scenario
  std::vector<config::CalibrationOverlay> calibration_overlays;  // --calibration
  platform::Fidelity fidelity = platform::Fidelity::folded;
  int samples = 1;                     // seeds per point (sweep/samples.hpp)
  // Called in this process as each point finishes (completion order): progress, the journal.
  std::function<void(const Json& row)> on_point;
  // Called in this process as each seed of a point finishes (progress of --samples).
  std::function<void()> on_seed;
  // Rows of points finished by an earlier, interrupted run (journal.hpp), by point index: used
  // as they are, not run again, and not passed to on_point.
  std::map<int, Json> finished;
};

// The most simulations (points x samples, of this shard) a sweep runs unless forced
// (docs/sweeps.md): about a day of folded record steps on 2 cores, far beyond any bundled sweep.
inline constexpr std::uint64_t kMaxSimulations = 100000;
// Rough costs (they size a refusal, not a prediction): per point, its patches, its row and the
// expansion's copies (bytes); per simulation, a folded record step with its scenario loaded in a
// worker process (core-seconds, this project's 2-core machine).
inline constexpr double kBytesPerPoint = 8 * 1024;
inline constexpr double kCoreSecondsPerSimulation = 1.0;

// The sweep's size and cost, counted before a point is built (count_points): every point is
// expanded, this shard's are simulated `samples` times each on `jobs` workers.
batch::BatchEstimate estimate_sweep(const SweepSpec& spec, const SweepOptions& options);
// batch::refuse_oversized_batch for the sweep: InfeasibleError beyond kMaxSimulations or this
// machine's memory unless `force`, beyond 2^31 - 1 points always.
void refuse_oversized_sweep(const SweepSpec& spec, const SweepOptions& options, bool force);

// Invalid and infeasible points are rows saying why; only unexpected failures are "error" rows.
// The result (rows, and hence every output) does not depend on `jobs`.
SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options);

// Every file the sweep reads: the sweep file, its base scenarios, and the configuration files
// and kernel calibration each point references (a point that does not load is skipped: it
// becomes a row saying why). Loading only, no simulation: a check before any work.
std::vector<std::filesystem::path> input_files(const SweepSpec& spec, const SweepOptions& options);

// One point (at sample `sample`: seed + sample) in this process (it forks only for the
// simulation itself).
Json run_point(const Point& p, const SweepOptions& options, int sample = 0);

}  // namespace moesim::sweep
