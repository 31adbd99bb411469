#pragma once
// Variability and expert load imbalance, applied to a step program by the engine
// (docs/method.md, "Variability and expert load"). The program stays the balanced, nominal one;
// this says how long each compute task takes and how many bytes each EP collective moves on a
// given GPU:
//  - full fidelity: every GPU has its own persistent speed, every compute task its jitter,
//    every EP rank its routed tokens per (layer, micro-batch), each a counter-based draw of
//    (seed, GPU, index) (draws.hpp), so nothing depends on the order the actors run in;
//  - folded fidelity: the representative takes the expected slowest member of each
//    synchronisation group (order_statistics.hpp): its stage's slowest GPU for the persistent
//    speed (the stages' expected slowest GPUs, ranked, go to the stages ranked by compute, the
//    slowest to the stage bounding the pipeline), and for jitter and routed tokens the slowest
//    member of the group waiting at the collective that ends the task's stretch of its pass (EP
//    or TP). A sampled folded run (--samples) takes each stage's slowest of the same per-GPU
//    draws the full fidelity uses instead of the expected one.
// A task's GPU time scales: seconds + gpu_seconds x (factor - 1), host launch time unchanged.
#include <cstdint>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/workload/expert_load.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::workload {

enum class VariationMode {
  full,            // per-GPU draws
  folded,          // expected order statistics
  folded_sampled,  // the seed's own slowest GPU, expected jitter and loads
};

class Variation {
 public:
  Variation(const Scenario& s, const plan::Layout& l, const StepProgram& program, VariationMode mode);

  // Whether anything differs from the nominal program.
  bool active() const { return active_; }

  // Seconds compute task `task` (its index in the program of pipeline rank `pp_rank`) takes on
  // `rank`.
  double compute_seconds(int rank, int pp_rank, int task, const Task& t) const;
  // Seconds the same task takes on an average GPU of the stage: mean speed, mean jitter, mean
  // routed tokens (folded: what each GPU the representative stands for is busy, where the
  // representative itself takes the expected slowest; the energy charges it).
  double mean_compute_seconds(const Task& t) const;
  // How much more than the mean EP exchange `t` moves for `rank`: an EP all-to-all scales with
  // the larger of what the rank sends and receives (its routed tokens against the mean); 1 for
  // anything else.
  double ep_load_factor(int rank, const Task& t) const;

  // Routed tokens of `rank` in (layer, micro-batch), relative to the mean (capped; full).
  double routed_load(int rank, int layer, int microbatch) const;
  const ExpertLoad& expert_load() const { return load_; }

 private:
  double gpu_factor(int rank, int task, const Task& t) const;
  // The named slow GPU's kernels take this many times as long (1: none).
  double slow_gpu_time_factor() const { return v_.slow_gpu_rank >= 0 ? 1 / v_.slow_gpu_speed : 1.0; }
  void prepare_folded(const StepProgram& program);

  const plan::Layout& l_;
  VariationMode mode_;
  std::uint64_t seed_ = 0;
  VariabilitySpec v_;
  ExpertLoad load_;
  bool active_ = false;
  std::vector<double> speed_;          // full: per rank, persistent time multiplier
  std::vector<int> ep_group_, ep_member_;
  std::vector<std::vector<double>> folded_factor_;  // folded: per pp rank, per task
  double folded_ep_bytes_factor_ = 1;
  double routed_mean_ = 1;  // a routed task's mean time factor (capped tokens); 1 when balanced
};

}  // namespace moesim::workload
