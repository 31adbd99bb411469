#pragma once
// What a simulation will cost, estimated before it starts from the layout and the step's task
// counts (workload::task_counts, no program built): a run that cannot finish on this machine
// (its memory beyond what is available) is refused with the estimate, unless forced.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/engine/simulate.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::driver {

struct WorkEstimate {
  long long program_tasks = 0;     // tasks of the step program, all pipeline ranks
  long long largest_rank_tasks = 0;
  long long simulated_tasks = 0;   // tasks executed: every simulated GPU runs its rank's program
  long long simulated_gpus = 0;
  long long actors = 0;            // SimGrid actors: one per simulated GPU and stream
  double memory_bytes = 0;         // peak of the program, the engine's state and the platform
  double seconds = 0;              // rough wall time at kSecondsPerTask
  std::string text() const;        // "1.2e+08 tasks on 10 actors, about 42 GB and 20 min"
};

// Rough costs per item, measured on this project's 2-core development machine (bench/README.md):
// they size a refusal, not a prediction. Bytes per program task: the Task struct, its label and
// its dependency list with allocator overhead (measured: 607,298 tasks, a 131,072-sequence
// record step, peaked at 227 MB RSS, about 310 bytes per task over the 40 MB base); per actor:
// its context and stack pages in use; per simulated GPU: its hosts, links and routes. Seconds
// per task: the folded record step, 19,042 tasks in about 0.3 s.
inline constexpr double kBytesPerTask = 320;
inline constexpr double kBytesPerActor = 64 * 1024;
inline constexpr double kBytesPerSimulatedGpu = 64 * 1024;
inline constexpr double kSecondsPerTask = 15e-6;

WorkEstimate estimate_work(const plan::Layout& l, const std::vector<long long>& rank_task_counts,
                           const engine::Options& options);

// Memory this process may use: $MOESIM_MEMORY_BYTES when set (a limit on a shared machine, and
// how the tests exercise the refusal), else MemAvailable from /proc/meminfo.
double available_memory_bytes();

// InfeasibleError with the estimate when the run needs more memory than `available_bytes`
// (unless `force`), or more tasks on one rank than the engine can index (2^31 - 1; always).
void refuse_oversized(const WorkEstimate& w, double available_bytes, bool force);

}  // namespace moesim::driver
