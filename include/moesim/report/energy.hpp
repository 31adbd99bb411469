#pragma once
// Energy of one training step, from the time each simulated GPU spends in each state (the
// engine's breakdown) and the power the GPU draws in it (configs/hardware): at its power limit
// while it computes (a tensor-core-bound GPU runs at its limit, which is why its clock is the
// sustained one), at `communication_watts` while only communication is exposed, at `idle_watts`
// in the pipeline bubble and while it waits for the host to launch kernels. The rest of the
// node (CPUs, NICs, fans, static power: configs/systems node_watts_per_gpu) draws its power for
// the whole step. Each GPU a simulated one stands for is charged its own expected kernel time
// (in the folded fidelity the simulated GPU is the expected slowest, the others wait for it).
#include "moesim/driver/run.hpp"

namespace moesim::report {

struct StepEnergy {
  double gpu_j = 0;                // every GPU of the cluster, one step
  double node_j = 0;               // the rest of the nodes, one step
  double computing_gpu_s = 0;      // GPU-seconds of kernels (compute and optimizer), every GPU
  double total_j() const { return gpu_j + node_j; }
  double average_gpu_w = 0;        // per GPU, over the step
  double j_per_gpu = 0;            // total_j / GPUs
  double tokens_per_kwh = 0;       // cluster: GPUs and nodes
  double gpu_tokens_per_kwh = 0;   // GPUs only
  double tflops_per_kw = 0;        // model TFLOP/s per GPU per kW that GPU draws
  double cluster_tflops_per_kw = 0;  // model TFLOP/s of the cluster per kW of GPUs and nodes
};

// Joules one GPU spends in one step with this breakdown, when it runs busy_share of the
// breakdown's compute time itself (engine::StageResult::mean_busy_share: each GPU is charged
// its own expected kernel time, not the slowest one's) and waits for its peers the rest.
double gpu_joules(const engine::Breakdown& b, const GpuSpec& gpu, double busy_share = 1);
StepEnergy step_energy(const driver::RunResult& r);

}  // namespace moesim::report
