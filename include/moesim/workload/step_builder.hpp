#pragma once
// Lowers a scenario and its layout into the per-pipeline-rank step programs: the layout's
// pipeline schedule (plan/schedule.hpp), each (micro-batch, chunk, pass) as compute segments and
// collectives, F&B pairs interleaved when the recipe overlaps them, PP sends between stages,
// the distributed optimizer's gradient reduce-scatter and parameter all-gather, and the
// optimizer step.
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::workload {

// Tasks build_step() would put in each pipeline rank's program, counted without building it
// (its size grows with micro-batches x layers; the work estimate must not pay that).
std::vector<long long> task_counts(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);

// Every quantity of the program that reaches SimGrid (task durations, bytes, SM fractions) is
// finite and within range: std::invalid_argument naming the task and the quantity otherwise.
void check_program(const StepProgram& program);

StepProgram build_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);

}  // namespace moesim::workload
