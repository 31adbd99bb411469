#pragma once
// Private to src/engine: turning one GPU's task intervals into the step-time breakdown.
#include <vector>

#include "moesim/engine/simulate.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::engine {

// Every instant of [0, step_end] is charged to exactly one part: compute (or host launch, or
// optimizer) when the compute stream is busy; otherwise the communication in flight that the
// compute stream is most likely waiting on (EP, then TP, PP, DP); otherwise the bubble.
Breakdown attribute_time(const workload::RankProgram& program, const std::vector<TaskInterval>& intervals,
                         double step_end_s);

}  // namespace moesim::engine
