#pragma once
// The first pass over a search's candidates: which ones could run at all (the layout rules of
// plan::make_layout, the memory model), and how fast the survivors are estimated to be
// (workload::estimate_step). Cheap enough for tens of thousands of candidates; only the most
// promising are then simulated.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/search/space.hpp"
#include "moesim/workload/step_estimate.hpp"

namespace moesim::search {

struct Screened {
  // Why it cannot run, one reason per failing rule ("layout: ...", "memory: ..."); empty: it
  // survives. Numbers in a rule's text are replaced by N so that one rule is one reason.
  std::vector<std::string> rejections;
  double max_memory_bytes = 0;     // the fullest GPU; 0 when the layout itself is invalid
  double usable_memory_bytes = 0;
  workload::StepEstimate estimate; // survivors only

  bool survives() const { return rejections.empty(); }
};

// A rule's text as a reason to count: every run of digits becomes "N".
std::string reason_key(const std::string& category, const std::string& rule_text);

// Screens one candidate on `base` (the candidate's settings applied to a copy).
Screened screen_one(const Scenario& base, const Candidate& c, const cost::KernelCalibration& cal);

// Screens every candidate, in up to `jobs` worker processes; the result (in candidate order)
// does not depend on `jobs`. `on_chunk(done, total)` reports progress in this process.
std::vector<Screened> screen_all(const Scenario& base, const std::vector<Candidate>& candidates,
                                 const cost::KernelCalibration& cal, int jobs,
                                 const std::function<void(int done, int total)>& on_chunk = nullptr);

}  // namespace moesim::search
