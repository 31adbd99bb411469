#pragma once
// The cost of a compute segment (a run of kernels between two communication points): GPU time,
// the host time needed to launch its kernels, and its FLOPs.
#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/model/ops.hpp"

namespace moesim::cost {

// The CPU issues kernels one after another (host time each) and the GPU runs each once it is
// issued and the previous one is done. A segment starts "cold" (the CPU cannot run ahead across
// the synchronisation at a communication point), so its duration is the pipelined completion
// time, between max(gpu, host) and gpu + host.
struct ComputeCost {
  double gpu_seconds = 0;        // kernels back to back, launch gaps included
  double host_seconds = 0;       // CPU time to issue them
  double pipelined_seconds = 0;  // completion from a cold start: the segment's duration
  double flop = 0;
  double model_flop = 0;
  int kernels = 0;
  double recompute_seconds = 0;  // part of gpu_seconds spent re-running forward ops

  // Kernels of this segment followed by those of `o`, the CPU issuing without a pause.
  ComputeCost& operator+=(const ComputeCost& o);
};

// Which sections a CUDA graph scope captures (Megatron's cuda_graph_scope / full-iteration).
bool graph_captured(const RecipeSpec& recipe, const std::string& section_name);

// Host time per eagerly launched kernel on the scenario's CPU: the stack's x86 figure (or the
// calibration's) times the system's host_op_time_ratio; and per kernel replayed from a graph.
double eager_host_per_kernel_s(const Scenario& s, const KernelCalibration& cal);
double graph_host_per_kernel_s(const Scenario& s, const KernelCalibration& cal);

// `only_weight_gradient` / `skip_weight_gradient` split a backward section for delayed wgrad.
enum class GradPart { all, data_only, weight_only };

ComputeCost section_cost(const model::Section& section, model::Pass pass, const Scenario& s,
                         const KernelCalibration& cal, GradPart part = GradPart::all);

}  // namespace moesim::cost
