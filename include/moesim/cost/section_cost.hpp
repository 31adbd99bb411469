#pragma once
// The cost of a compute segment (a run of kernels between two communication points): GPU time,
// the host time needed to launch its kernels, and its FLOPs.
#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/model/ops.hpp"

namespace moesim::cost {

struct ComputeCost {
  double gpu_seconds = 0;     // kernels back to back, launch gaps included
  double host_seconds = 0;    // CPU time to launch them
  double flop = 0;
  double model_flop = 0;
  int kernels = 0;
  double recompute_seconds = 0;  // part of gpu_seconds spent re-running forward ops

  // The segment cannot finish before the host has launched its last kernel.
  double seconds() const { return gpu_seconds > host_seconds ? gpu_seconds : host_seconds; }
  ComputeCost& operator+=(const ComputeCost& o);
};

// Which sections a CUDA graph scope captures (Megatron's cuda_graph_scope / full-iteration).
bool graph_captured(const StackSpec& stack, const std::string& section_name);
bool recomputed_module(const StackSpec& stack, const std::string& module);

// `only_weight_gradient` / `skip_weight_gradient` split a backward section for delayed wgrad.
enum class GradPart { all, data_only, weight_only };

ComputeCost section_cost(const model::Section& section, model::Pass pass, const Scenario& s,
                         const KernelCalibration& cal, GradPart part = GradPart::all);

}  // namespace moesim::cost
