#include "moesim/sweep/from_runs.hpp"

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

// A reason's first line, cut to a length that keeps one gate line per point readable.
std::string first_line(const std::string& reason) {
  constexpr std::size_t kShown = 240;
  std::string line = reason.substr(0, reason.find('\n'));
  if (line.size() <= kShown) return line;
  std::size_t cut = kShown;  // not inside a UTF-8 character
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "...";
}

SweepResult series_result(const std::string& name, int points, bool gpu_series) {
  SweepResult r;
  r.name = name;
  r.point_count = points;
  if (gpu_series) {
    r.axis_columns = {"gpus"};
    r.gpu_column = "gpus";
    r.gpu_scaling = to_string(GpuScaling::weak);
  }
  return r;
}

}  // namespace

Point series_point(int index, int gpus, bool gpu_series) {
  Point p;
  p.index = index;
  if (gpu_series) p.axis_values.emplace_back("gpus", gpus);
  return p;
}

SweepResult runs_as_result(const std::vector<driver::RunResult>& runs, bool gpu_series) {
  SweepResult r = series_result(runs.empty() ? "" : runs.front().scenario.name, static_cast<int>(runs.size()), gpu_series);
  for (std::size_t i = 0; i < runs.size(); ++i)
    r.rows.push_back(result_row(series_point(static_cast<int>(i), runs[i].scenario.gpus, gpu_series), runs[i]));
  fill_scaling_efficiency(r);
  return r;
}

SweepResult sampled_rows_as_result(const std::vector<std::vector<Json>>& seed_rows, const std::string& name,
                                   bool gpu_series) {
  SweepResult r = series_result(name, static_cast<int>(seed_rows.size()), gpu_series);
  for (const auto& rows : seed_rows) r.rows.push_back(combined_sample_row(rows));
  fill_scaling_efficiency(r);
  return r;
}

std::vector<driver::GatePoint> gate_points(const SweepResult& r) {
  std::vector<driver::GatePoint> out;
  for (const Json& row : r.rows) {
    driver::GatePoint p;
    p.name = r.axis_columns.empty() ? plain_value(row["scenario"]) : point_name(r.axis_columns, row);
    if (p.name.empty()) p.name = "point " + plain_value(row["index"]);  // a point that failed before it had a name
    if (!has_status(row, kStatusOk)) {
      p.not_run = plain_value(row["status"]) + ": " + first_line(plain_value(row["reason"]));
      out.push_back(std::move(p));
      continue;
    }
    // The pessimistic end of an interval where there is one (--samples), else the value.
    const auto pick = [&](const char* key, int end) -> std::optional<double> {
      const Json& ci = row[std::string(key) + "_ci95"];
      if (ci.is_array()) return ci[static_cast<std::size_t>(end)].get<double>();
      if (row[key].is_number()) return row[key].get<double>();
      return std::nullopt;
    };
    p.step_time_s = pick("step_time_s", 1);
    p.tflops_per_gpu = pick("tflops_per_gpu", 0);
    p.scaling_efficiency = pick("scaling_efficiency", 0);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace moesim::sweep
