#pragma once
// The candidates of a search: every combination of the space's axes, each one a layout and the
// recipe settings a run would choose, applied to the base scenario.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/specs.hpp"
#include "moesim/search/spec.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::search {

struct Candidate {
  int tp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, cp = 1;
  int micro_batch = 1;
  std::string schedule = "1f1b";
  std::string pipeline_layout;            // "" = generated (balanced)
  std::string sharding = "optimizer";     // layout.sharding
  std::vector<std::string> recompute;     // sorted
  bool ep_overlap = false, delay_wgrad = false;
  std::string dispatcher, cuda_graphs;

  bool operator==(const Candidate& o) const = default;
};

// Every axis with its values, defaults filled in.
struct Space {
  std::vector<int> tp, pp, vpp, ep, etp, cp, micro_batch;
  std::vector<std::string> schedule, pipeline_layout;
  std::vector<std::string> sharding = {"optimizer"};
  std::vector<std::vector<std::string>> recompute;
  std::vector<bool> ep_overlap, delay_wgrad;
  std::vector<std::string> dispatcher, cuda_graphs;
  // Default vpp values are kept only where pp * vpp <= the model's transformer layers (no
  // virtual stage without a layer) and, with pp = 1, only vpp = 1; values the file lists are all
  // kept.
  bool vpp_defaulted = false;
  int layers = 0;
};

// The spec's axes, each absent one given its default for `base` (docs/search.md lists them;
// every default includes the base's own value). ConfigError naming the search file for a
// dispatcher or CUDA graph scope the base's stack does not offer.
Space resolve_space(const SearchSpec& spec, const Scenario& base);

// Every combination, in axis order (tp slowest, cuda_graphs fastest); an explicit pipeline
// layout only with the pp * vpp its stages need.
std::vector<Candidate> enumerate(const Space& space);

// How many candidates enumerate(space) yields, counted without building one (saturating at
// batch::kCountSaturated): a search is sized by it before it starts (search/run.hpp).
std::uint64_t count_candidates(const Space& space);
// The sizes of the axes with more than one value, for messages: "tp 4, pp 5, vpp 4, ep 9, ...".
std::string axis_sizes(const Space& space);

// The base scenario's own layout and recipe settings, as a candidate.
Candidate reference_candidate(const Scenario& base);

// The candidate's settings on a scenario (in place), and the same as dotted scenario paths for
// the strict reader (a simulated candidate is read like a scenario file).
void apply(const Candidate& c, Scenario& s);
sweep::FieldValues patches(const Candidate& c);

// {"tp": ..., "micro_batch": ..., ...} and {"recompute": [...], "ep_overlap": ..., ...}.
nlohmann::ordered_json layout_json(const Candidate& c);
nlohmann::ordered_json recipe_json(const Candidate& c);
Candidate candidate_from_json(const nlohmann::ordered_json& layout, const nlohmann::ordered_json& recipe);

// "TP1 PP2 VPP8 EP32 mb1, ep_overlap, recompute moe_act": what differs from a plain layout.
std::string describe(const Candidate& c);

}  // namespace moesim::search
