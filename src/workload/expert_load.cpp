#include "moesim/workload/expert_load.hpp"

#include <cmath>

namespace moesim::workload {

double ExpertLoad::cv() const { return std::sqrt(step_cv * step_cv + microbatch_cv * microbatch_cv); }

double ExpertLoad::dropped_fraction() const {
  const double sigma = cv();
  if (balanced || capacity <= 0 || sigma <= 0) return 0;
  const double z = (capacity - 1) / sigma;
  const double density = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double above = 0.5 * std::erfc(z / std::sqrt(2.0));
  return sigma * density + (1 - capacity) * above;
}

ExpertLoad expert_load(const Scenario& s, const plan::Layout& l) {
  ExpertLoad e;
  const MoeSpec& m = s.model.moe;
  if (m.experts == 0 || l.ep <= 1) return e;
  e.ranks = l.ep;
  e.capacity = s.recipe.capacity_factor;
  if (s.recipe.force_balanced_routing) return e;
  e.balanced = false;
  const double sigma = s.variability.expert_load_sigma;
  const double experts_per_rank = static_cast<double>(m.experts) / l.ep;
  e.step_cv = std::sqrt(std::expm1(sigma * sigma) / experts_per_rank);
  // Tokens one rank routes per micro-batch (sequence and tensor parallelism split them).
  const double tokens = static_cast<double>(s.training.micro_batch) * s.training.seq_len / (l.cp * l.tp);
  const double mean_routed = tokens * m.top_k;
  e.microbatch_cv = std::sqrt((1 - 1.0 / l.ep) / mean_routed);
  return e;
}

}  // namespace moesim::workload
