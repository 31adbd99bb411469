#pragma once
// `moesim run` results as a sweep result, so that a run and a sweep share one CSV format
// (columns, RFC 4180 quoting, numbers) and one set of CI gates.
#include <vector>

#include "moesim/driver/gates.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/sweep/result.hpp"

namespace moesim::sweep {

// One point, or (`gpu_series`) a weak-scaling series with a "gpus" axis whose first point is
// the efficiency reference.
SweepResult runs_as_result(const std::vector<driver::RunResult>& runs, bool gpu_series);

// The rows with a result ("ok"), as the gates see them; invalid and infeasible points are
// reported by the sweep's summary, not gated.
std::vector<driver::GatePoint> gate_points(const SweepResult& r);

}  // namespace moesim::sweep
