#pragma once
// A fast estimate of one training step, without SimGrid: what a layout search ranks thousands of
// candidates by before it simulates the most promising ones.
//
// The same lowering as the simulation (the passes' compute segments priced by the cost model,
// their collectives' bytes) on an idle platform: each collective takes its closed form, the
// compute and communication streams of a pass (or of an EP-overlapped forward/backward pair)
// are replayed in order, and the pipeline schedule is replayed rank by rank with the PP sends
// between stages (max-plus). Then the distributed optimizer's exposed all-gather before the
// first forward, its reduce-scatters after each chunk's last backward, and the Adam step.
//
// What it leaves out, and the simulation has: contention (EP, DP and PP traffic sharing NICs and
// spine links), the dispatcher's SMs slowing the compute beside it, and the exact interleaving
// of a pass's segments with other work. So it ranks; the simulation measures.
#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::workload {

struct StepEstimate {
  double step_time_s = 0;
  double model_flop_per_gpu = 0;   // Megatron convention, per step (as the simulation credits)
  double tflops_per_gpu = 0;
  // Per micro-batch and pipeline rank, summed over its chunks, forward + backward, on the rank
  // whose passes take longest: the parts the step is made of.
  double compute_s = 0;            // every micro-batch's compute on that rank
  double exposed_comm_s = 0;       // its TP and EP communication not hidden behind compute
  double pipeline_s = 0;           // the rest of the schedule: bubble and PP waits
  double exposed_dp_s = 0;         // parameter all-gather before, gradient reduce-scatter after
  double optimizer_s = 0;
};

StepEstimate estimate_step(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);

}  // namespace moesim::workload
