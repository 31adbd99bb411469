#include "moesim/sweep/from_runs.hpp"

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

SweepResult runs_as_result(const std::vector<driver::RunResult>& runs, bool gpu_series) {
  SweepResult r;
  r.name = runs.empty() ? "" : runs.front().scenario.name;
  r.point_count = static_cast<int>(runs.size());
  if (gpu_series) {
    r.axis_columns = {"gpus"};
    r.gpu_column = "gpus";
    r.gpu_scaling = to_string(GpuScaling::weak);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Point p;
    p.index = static_cast<int>(i);
    if (gpu_series) p.axis_values.emplace_back("gpus", runs[i].scenario.gpus);
    r.rows.push_back(result_row(p, runs[i]));
  }
  fill_scaling_efficiency(r);
  return r;
}

std::vector<driver::GatePoint> gate_points(const SweepResult& r) {
  std::vector<driver::GatePoint> out;
  for (const Json& row : r.rows) {
    if (!has_status(row, kStatusOk)) continue;
    driver::GatePoint p;
    p.name = r.axis_columns.empty() ? plain_value(row["scenario"]) : point_name(r.axis_columns, row);
    p.step_time_s = row["step_time_s"].get<double>();
    p.tflops_per_gpu = row["tflops_per_gpu"].get<double>();
    if (row["scaling_efficiency"].is_number()) p.scaling_efficiency = row["scaling_efficiency"].get<double>();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace moesim::sweep
