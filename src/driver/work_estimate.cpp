#include "moesim/driver/work_estimate.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>

#include "moesim/config/error.hpp"

namespace moesim::driver {

std::string WorkEstimate::text() const {
  const std::string time = seconds < 120    ? fmt::format("{:.0f} s", seconds)
                           : seconds < 7200 ? fmt::format("{:.0f} min", seconds / 60)
                                            : fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.3g} tasks ({:.3g} in the program, {:.3g} on its largest pipeline rank) on {} actors for {} "
                     "simulated GPUs; about {:.3g} GB of memory and {} of wall time",
                     static_cast<double>(simulated_tasks), static_cast<double>(program_tasks),
                     static_cast<double>(largest_rank_tasks), actors, simulated_gpus, memory_bytes / 1e9, time);
}

WorkEstimate estimate_work(const plan::Layout& l, const std::vector<long long>& rank_task_counts,
                           const engine::Options& options) {
  WorkEstimate w;
  const bool full = options.fidelity == platform::Fidelity::full;
  const long long replicas = full ? l.world / l.pp : 1;  // simulated GPUs per pipeline rank
  for (long long n : rank_task_counts) {
    w.program_tasks += n;
    w.largest_rank_tasks = std::max(w.largest_rank_tasks, n);
    w.simulated_tasks += n * replicas;
  }
  w.simulated_gpus = replicas * l.pp;
  w.actors = w.simulated_gpus * workload::kStreams;
  const double messages = 2.0 * l.microbatches * l.pp * l.vpp;
  // The program, in the parent (the simulating child shares it copy-on-write); per simulated
  // GPU a done flag per task and an arrival flag per message; the observed ranks' intervals
  // (24 bytes per task); actors and the platform.
  const double observed_tasks = static_cast<double>(w.program_tasks);
  w.memory_bytes = static_cast<double>(w.program_tasks) * kBytesPerTask + static_cast<double>(w.simulated_tasks) +
                   messages * static_cast<double>(w.simulated_gpus) + 24 * observed_tasks +
                   static_cast<double>(w.actors) * kBytesPerActor +
                   static_cast<double>(w.simulated_gpus) * kBytesPerSimulatedGpu;
  w.seconds = static_cast<double>(w.simulated_tasks) * kSecondsPerTask;
  return w;
}

double available_memory_bytes() {
  if (const char* limit = std::getenv("MOESIM_MEMORY_BYTES"); limit && *limit) {
    char* end = nullptr;
    const double v = std::strtod(limit, &end);
    if (end && *end == '\0' && v > 0) return v;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return static_cast<double>(::sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

void refuse_oversized(const WorkEstimate& w, double available_bytes, bool force) {
  if (w.largest_rank_tasks > INT_MAX)
    throw InfeasibleError(fmt::format("this run cannot be simulated: {}; one pipeline rank's program would hold more "
                                      "than 2^31 - 1 tasks, more than the engine can index (fewer micro-batches or "
                                      "layers per pipeline rank)", w.text()));
  if (force || w.memory_bytes <= available_bytes) return;
  throw InfeasibleError(fmt::format("this run would not fit on this machine: {}, and {:.3g} GB are available; "
                                    "use --force to run it anyway (or set MOESIM_MEMORY_BYTES)",
                                    w.text(), available_bytes / 1e9));
}

}  // namespace moesim::driver
