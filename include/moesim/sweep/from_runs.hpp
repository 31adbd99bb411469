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

// Point `index` of such a result (its "gpus" axis value when `gpu_series`).
Point series_point(int index, int gpus, bool gpu_series);

// The same from --samples: per point the result rows of its seeds, in seed order.
SweepResult sampled_rows_as_result(const std::vector<std::vector<Json>>& seed_rows, const std::string& name,
                                   bool gpu_series);

// Every row as the gates see them: the values of those with a result ("ok"), and why the
// others did not run (invalid, infeasible, error), which fails any gate. With --samples the gates see the pessimistic end
// of each 95 % interval: the low end of TFLOP/s and scaling efficiency, the high end of the step
// time.
std::vector<driver::GatePoint> gate_points(const SweepResult& r);

}  // namespace moesim::sweep
