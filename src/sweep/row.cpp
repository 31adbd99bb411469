// Sweep rows from run results. The slowest pipeline rank's breakdown stands for the step: its
// parts add up to the step time, which is what a stacked plot of the breakdown needs.
#include "moesim/sweep/row.hpp"

#include <algorithm>

#include "moesim/report/energy.hpp"
#include "moesim/report/samples.hpp"
#include "moesim/util/statistics.hpp"

namespace moesim::sweep {

namespace {

const std::vector<std::string> kResultColumns = {
    "status", "reason", "scenario", "system_name", "gpu", "precision", "gpu_count", "global_batch",
    "tp", "cp", "pp", "vpp", "ep", "etp", "dp", "microbatches", "schedule",
    "step_time_s", "tflops_per_gpu", "tokens_per_s_per_gpu", "mfu",
    "compute_s", "recompute_s", "host_overhead_s", "exposed_ep_dispatch_s", "exposed_ep_combine_s",
    "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s", "optimizer_s",
    "max_memory_per_gpu_bytes", "usable_memory_per_gpu_bytes", "fits_in_memory", "scaling_efficiency",
    "energy_j_per_step", "tokens_per_kwh", "tflops_per_kw",
    "scaling_efficiency_ci95", "samples", "step_time_s_ci95", "tflops_per_gpu_ci95", "tflops_per_gpu_samples"};

Json blank_row(const Point& p) {
  Json row;
  row["index"] = p.index;
  for (const auto& [column, value] : p.axis_values) row[column] = Json(value);
  for (const std::string& c : kResultColumns) row[c] = nullptr;
  return row;
}

void fill_identity(Json& row, const Scenario& s) {
  row["scenario"] = s.name;
  row["system_name"] = s.system.name;
  row["gpu"] = s.system.gpu.name;
  row["precision"] = std::string(to_string(s.training.precision));
  row["gpu_count"] = s.gpus;
  row["global_batch"] = s.training.global_batch;
}

const engine::StageResult* slowest_stage(const engine::SimResult& sim) {
  const engine::StageResult* slowest = nullptr;
  for (const auto& st : sim.stages)
    if (!slowest || st.finish_s > slowest->finish_s) slowest = &st;
  return slowest;
}

}  // namespace

bool has_status(const Json& row, const char* status) {
  const Json& s = row["status"];
  return s.is_string() && s.get_ref<const std::string&>() == status;
}

const std::vector<std::string>& result_columns() { return kResultColumns; }

bool is_fixed_column(const std::string& name) {
  return name == "index" || std::find(kResultColumns.begin(), kResultColumns.end(), name) != kResultColumns.end();
}

std::vector<std::string> row_columns(const std::vector<std::string>& axis_columns) {
  std::vector<std::string> out{"index"};
  out.insert(out.end(), axis_columns.begin(), axis_columns.end());
  out.insert(out.end(), kResultColumns.begin(), kResultColumns.end());
  return out;
}

Json result_row(const Point& p, const driver::RunResult& r) {
  Json row = blank_row(p);
  row["status"] = kStatusOk;
  row["reason"] = r.fits_in_memory ? "" : "does not fit in memory (simulated anyway)";
  fill_identity(row, r.scenario);
  const plan::Layout& l = r.layout;
  const std::pair<const char*, int> layout_columns[] = {{"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp},
                                                        {"vpp", l.vpp}, {"ep", l.ep}, {"etp", l.etp},
                                                        {"dp", l.dp}, {"microbatches", l.microbatches}};
  for (const auto& [name, value] : layout_columns) row[name] = value;
  row["schedule"] = std::string(plan::to_string(l.schedule));
  row["step_time_s"] = r.metrics.step_time_s;
  row["tflops_per_gpu"] = r.metrics.tflops_per_gpu;
  row["tokens_per_s_per_gpu"] = r.metrics.tokens_per_s_per_gpu;
  row["mfu"] = r.metrics.mfu;
  if (const engine::StageResult* st = slowest_stage(r.sim)) {
    const engine::Breakdown& b = st->breakdown;
    row["compute_s"] = b.compute_s;
    row["recompute_s"] = b.recompute_s;
    row["host_overhead_s"] = b.host_overhead_s;
    row["exposed_ep_dispatch_s"] = b.exposed_ep_dispatch_s;
    row["exposed_ep_combine_s"] = b.exposed_ep_combine_s;
    row["exposed_tp_s"] = b.exposed_tp_s;
    row["exposed_pp_s"] = b.exposed_pp_s;
    row["exposed_dp_s"] = b.exposed_dp_s;
    row["bubble_s"] = b.bubble_s;
    row["optimizer_s"] = b.optimizer_s;
  }
  double max_bytes = 0, usable_bytes = 0;
  for (const auto& m : r.memory) {
    max_bytes = std::max(max_bytes, m.total_bytes());
    usable_bytes = m.usable_bytes;
  }
  row["max_memory_per_gpu_bytes"] = max_bytes;
  row["usable_memory_per_gpu_bytes"] = usable_bytes;
  row["fits_in_memory"] = r.fits_in_memory;
  const report::StepEnergy e = report::step_energy(r);
  row["energy_j_per_step"] = e.total_j();
  row["tokens_per_kwh"] = e.tokens_per_kwh;
  row["tflops_per_kw"] = e.tflops_per_kw;
  row["samples"] = 1;
  return row;
}

Json combined_sample_row(const std::vector<Json>& rows) {
  for (const Json& row : rows)
    if (!has_status(row, kStatusOk)) return row;
  if (rows.size() == 1) return rows.front();
  Json row = report::mean_document(rows);
  std::vector<double> steps, tflops;
  for (const Json& r : rows) {
    steps.push_back(r["step_time_s"].get<double>());
    tflops.push_back(r["tflops_per_gpu"].get<double>());
  }
  const util::Interval step = util::interval95(steps), rate = util::interval95(tflops);
  row["samples"] = static_cast<int>(rows.size());
  row["step_time_s_ci95"] = Json::array({step.low, step.high});
  row["tflops_per_gpu_ci95"] = Json::array({rate.low, rate.high});
  row["tflops_per_gpu_samples"] = tflops;
  return row;
}

Json failed_row(const Point& p, const std::string& status, const std::string& reason, const Scenario* s) {
  Json row = blank_row(p);
  row["status"] = status;
  row["reason"] = reason;
  if (s) fill_identity(row, *s);
  return row;
}

}  // namespace moesim::sweep
