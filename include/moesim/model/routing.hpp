#pragma once
// Where a token's experts live: group-limited top-k routing under balanced (random) scores, and
// the expected number of distinct GPUs and nodes a token is sent to, which is what the
// deduplicating dispatchers (DeepEP, HybridEP) move instead of top_k copies.
//
// The router (DeepSeek-V3 §2.1.2; Megatron's moe_router_num_groups / moe_router_group_topk):
// the E experts form G equal groups of consecutive experts; a token first keeps its M best
// groups, then its top-k experts among those groups' experts. Experts are laid out on the EP
// ranks in order, so a GPU (or a node) holds a block of consecutive experts.
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::model {

struct RoutingShape {
  int experts = 0;           // E
  int top_k = 0;             // k
  int groups = 1;            // G (n_group); 1 = no group limit
  int groups_per_token = 1;  // M (topk_group), <= G
};

RoutingShape routing_shape(const ModelSpec& m);

// Expected number of distinct units (blocks of `experts_per_unit` consecutive experts) holding
// at least one of a token's top-k experts, when scores are i.i.d. (balanced routing) and a
// group's score is its best expert's score (DeepEP's benchmark router).
//
// Derivation: with i.i.d. scores the experts' ranking is a uniformly random permutation. Scan it
// from the best expert down: a group is chosen when its first expert is met, until M groups
// are chosen; an expert is taken when its group is chosen, until k are taken. So the next taken
// expert is uniform among the experts not yet scanned (while fewer than M groups are chosen) or
// among the unscanned experts of the chosen groups (once M are). The state (taken s, chosen
// groups j, units hit h) is then a Markov chain: with units inside groups, the next expert from
// a chosen group lands on a hit unit with probability (h·L − s) / (j·E_g − s); with units
// holding whole groups, a newly chosen group lies in a hit unit with probability
// (h·L/E_g − j) / (G − j). The expectation of h at s = k is computed exactly by recursion.
// Megatron and DeepSeek-V3 score a group by the sum of its top k/M experts instead; a
// Monte-Carlo of that router stays within 1 % of this (tests/unit/test_model_routing.cpp).
//
// Throws std::invalid_argument when experts_per_unit does not divide E, or (with a group limit)
// units and groups do not nest (a unit inside a group or whole groups inside a unit).
double expected_distinct_units(const RoutingShape& r, int experts_per_unit);

// Units of unequal sizes (an EP group split unevenly over NVLink domains: 56 and 8 of an EP64
// group on 72-GPU racks): unit u holds experts_in_unit[u] consecutive experts, the sizes summing
// to E. A token's k experts are taken as a uniform k-subset (hypergeometric): unit u is hit with
// probability 1 - C(E - e_u, k) / C(E, k) (probability_unit_hit), and the expected distinct units
// is the sum of those. The group limit is ignored here, as expected_distinct_units' callers do
// where units and groups do not nest: it concentrates a token on fewer units, so this overstates
// the copies slightly. Throws std::invalid_argument when the sizes are not positive or do not sum
// to E, or the routing is inconsistent (top_k outside 0..E).
double probability_unit_hit(const RoutingShape& r, int experts_in_unit);
double expected_distinct_units_uneven(const RoutingShape& r, const std::vector<int>& experts_in_unit);

// Distinct EP ranks per token (E/ep experts per rank) and distinct nodes, when each node holds
// `ranks_per_node` consecutive EP ranks.
double expected_distinct_ranks(const RoutingShape& r, int ep);
double expected_distinct_nodes(const RoutingShape& r, int ep, int ranks_per_node);

}  // namespace moesim::model
