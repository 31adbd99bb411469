#pragma once
// Runs a step program on the SimGrid platform: one actor per (simulated GPU, stream), each
// executing its stream's tasks in order and waiting on dependencies and pipeline messages the
// way a CUDA stream waits on events. Overlap is not an input: it emerges wherever the program
// puts independent work on different streams.
#include <functional>
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/platform/platform.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::engine {

// How far a running simulation is.
struct SimProgress {
  long long tasks_done = 0;      // tasks executed so far, all simulated GPUs
  long long tasks_total = 0;
  double simulated_s = 0;        // simulated clock
};

struct Options {
  platform::Fidelity fidelity = platform::Fidelity::folded;
  bool record_timeline = false;  // keep every task's interval of the observed ranks (for traces)
  // Folded: take the scenario seed's own slowest GPU instead of the expected one (one sample of
  // a --samples run); full fidelity always draws every GPU from the seed.
  bool sampled = false;
  // Full: each GPU keeps a collective's plan from its first run for the later runs of the same
  // collective (none under routed-load imbalance, whose exchanges differ by micro-batch). Off,
  // every run plans anew: slower, the same result (tests/unit/test_event_core.cpp checks).
  bool reuse_plans = true;
  // Progress hook, called about every progress_interval_s of wall time while the simulation
  // runs, and once at its end. It runs in the simulating process, a child of the caller (see
  // simulate()): it shares no memory with the caller and should only write to a descriptor.
  std::function<void(const SimProgress&)> on_progress;
  double progress_interval_s = 0.5;
};

// Where the time of one observed GPU went; the parts add up to the step time.
struct Breakdown {
  double compute_s = 0;          // kernels on the compute stream (recompute included)
  double recompute_s = 0;        // of which re-running forward ops
  double host_overhead_s = 0;    // compute stream waiting for the CPU to launch kernels, or for
                                 // offloaded activations to come back from host memory
  double optimizer_s = 0;
  double exposed_tp_s = 0;       // compute idle while a TP collective is in flight
  double exposed_ep_dispatch_s = 0;
  double exposed_ep_combine_s = 0;
  double exposed_pp_s = 0;
  double exposed_dp_s = 0;       // gradient reduce-scatter and parameter all-gather
  double bubble_s = 0;           // idle with nothing of its own in flight: pipeline bubble
  double total() const;
};

// Bytes one observed GPU moved through its ports during the step (each direction), by kind.
struct Traffic {
  double ep_nvlink_bytes = 0;       // EP dispatch and combine, forward and backward
  double ep_nic_bytes = 0;          //   (deduplicating dispatchers: one copy per (token, domain))
  double other_nvlink_bytes = 0;    // TP, DP and PP
  double other_nic_bytes = 0;
  double ep_copies_per_token = 0;   // destination GPUs per token (top_k for the NCCL all-to-all)
  double ep_domains_per_token = 0;  // destination NVLink domains per token, the own included
};

struct TaskInterval {
  int task = 0;
  double start_s = 0;
  double end_s = 0;
};

struct StageResult {
  int pp_rank = 0;
  int observed_rank = 0;         // global rank whose time is reported
  int replicas = 0;              // GPUs that behave like it
  double finish_s = 0;
  Breakdown breakdown;
  // Kernel time of an average GPU of those it stands for, as a share of its own (its compute_s):
  // folded, the mean GPU's expected over the expected slowest's (below 1 with variability);
  // full, the mean of the stage's GPUs' over the observed one's. The energy charges it.
  double mean_busy_share = 1;
  Traffic traffic;
  std::vector<TaskInterval> timeline;  // when Options::record_timeline
};

struct SimResult {
  double step_time_s = 0;
  std::vector<StageResult> stages;
  long long activities = 0;      // tasks executed (all simulated GPUs)
  int simulated_gpus = 0;
};

// Simulates in a child process (SimGrid holds one platform per process).
SimResult simulate(const Scenario& s, const plan::Layout& l, const workload::StepProgram& program,
                   const Options& options);

// Serialisation used to return results from the child process.
std::string to_wire(const SimResult& r);
SimResult from_wire(const std::string& text);

}  // namespace moesim::engine
