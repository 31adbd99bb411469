#pragma once
// How many routed tokens each EP rank receives, relative to the mean, when the recipe does not
// force balanced routing (docs/method.md, "Variability and expert load").
//
// The mechanism: per step and layer, each expert's share of the tokens is log-normal with sigma
// = variability.expert_load_sigma (what the router's own balancing leaves: ALF); a rank holds
// E/ep experts, so its expected share varies with cv_step^2 = (exp(sigma^2) - 1) / (E/ep). Each
// micro-batch then routes its tokens x top_k copies at random by those shares, a binomial count
// around the rank's mean mu = tokens x top_k: cv_microbatch^2 = (1 - 1/ep) / mu. A rank's load is
// taken normal with both spreads (independent across ranks, so tokens are conserved only in
// expectation) and capped at the recipe's capacity factor (tokens beyond it dropped; applied per
// rank, an upper bound on what per-expert caps drop).
#include "moesim/config/specs.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::workload {

struct ExpertLoad {
  bool balanced = true;      // every rank exactly the mean: force-balanced, dense or ep = 1
  int ranks = 1;             // EP ranks sharing the tokens (the synchronisation group)
  double step_cv = 0;        // spread of a rank's share, drawn once per step and layer
  double microbatch_cv = 0;  // spread of one micro-batch's tokens around that share
  double capacity = 0;       // a rank's cap, as a multiple of the mean; 0 = dropless

  double cv() const;         // of one micro-batch's load: both spreads together
  // The expected share of the routed tokens dropped by the cap: E[max(0, X - c)] for the rank's
  // load X ~ N(1, cv) and cap c (the normal's partial expectation); 0 when balanced or dropless.
  double dropped_fraction() const;
};

ExpertLoad expert_load(const Scenario& s, const plan::Layout& l);

}  // namespace moesim::workload
