#pragma once
// Lowers a scenario and its layout into the per-pipeline-rank step programs: the (interleaved)
// 1F1B schedule with its warm-up, steady state and cool-down, each (micro-batch, chunk, pass)
// as compute segments and collectives, PP sends between stages, the distributed optimizer's
// gradient reduce-scatter and parameter all-gather, and the optimizer step.
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::workload {

// One entry of a pipeline rank's schedule: run (micro-batch, chunk) forward or backward; a
// steady-state pair (forward of one, backward of another) is two consecutive entries with
// `paired` set on the second.
struct ScheduleEntry {
  Phase phase = Phase::forward;
  int microbatch = 0;
  int chunk = 0;
  bool paired = false;
};

// Megatron's forward_backward_pipelining_with_interleaving order (non-interleaved when vpp=1).
std::vector<ScheduleEntry> pipeline_schedule(const plan::Layout& l, int pp_rank);

// Tasks build_step() would put in each pipeline rank's program, counted without building it
// (its size grows with micro-batches x layers; the work estimate must not pay that).
std::vector<long long> task_counts(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);

StepProgram build_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);

}  // namespace moesim::workload
