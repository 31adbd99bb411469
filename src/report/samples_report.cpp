// Summaries of --samples runs: means, 95 % intervals, and their table and CSV forms.
#include <fmt/format.h>

#include "moesim/report/samples.hpp"
#include "moesim/util/statistics.hpp"

namespace moesim::report {

namespace {

template <class J>
J mean_of(const std::vector<J>& docs) {
  const J& first = docs.front();
  if (first.is_number_float()) {
    double sum = 0;
    for (const J& d : docs) sum += d.template get<double>();
    return sum / static_cast<double>(docs.size());
  }
  if (first.is_object() || first.is_array()) {
    J out = first;
    for (auto it = out.begin(); it != out.end(); ++it) {
      std::vector<J> parts;
      const auto at = [&](const J& d) -> const J& {
        return first.is_object() ? d.at(it.key()) : d.at(static_cast<std::size_t>(it - out.begin()));
      };
      for (const J& d : docs) parts.push_back(at(d));
      *it = mean_of(parts);
    }
    return out;
  }
  return first;
}

// The headline figures that get an interval.
const char* const kIntervalKeys[] = {"step_time_s", "tflops_per_gpu", "tokens_per_s_per_gpu", "mfu"};

nlohmann::json interval_json(const util::Interval& i) { return nlohmann::json::array({i.low, i.high}); }

std::vector<double> values(const std::vector<nlohmann::json>& runs, const char* key) {
  std::vector<double> out;
  for (const auto& r : runs) out.push_back(r.at(key).get<double>());
  return out;
}

std::string with_interval(const nlohmann::json& doc, const char* key, double scale, const char* format) {
  const std::string mean = fmt::format(fmt::runtime(format), scale * doc.at(key).get<double>());
  const auto& ci = doc.at(std::string(key) + "_ci95");
  if (ci.is_null()) return mean;
  return fmt::format("{} [{}, {}]", mean, fmt::format(fmt::runtime(format), scale * ci[0].get<double>()),
                     fmt::format(fmt::runtime(format), scale * ci[1].get<double>()));
}

}  // namespace

nlohmann::json mean_document(const std::vector<nlohmann::json>& docs) { return mean_of(docs); }
nlohmann::ordered_json mean_document(const std::vector<nlohmann::ordered_json>& docs) { return mean_of(docs); }

nlohmann::json samples_json(const std::vector<nlohmann::json>& runs) {
  nlohmann::json out = mean_document(runs);
  out["samples"] = runs.size();
  out["seeds"] = nlohmann::json::array();
  for (const auto& r : runs) out["seeds"].push_back(r.at("seed"));
  for (const char* key : kIntervalKeys) out[std::string(key) + "_ci95"] = interval_json(util::interval95(values(runs, key)));
  return out;
}

nlohmann::json sampled_scaling_json(const std::vector<std::vector<nlohmann::json>>& runs) {
  nlohmann::json series = nlohmann::json::array();
  const std::vector<double> reference = values(runs.front(), "tflops_per_gpu");
  for (const auto& point : runs) {
    nlohmann::json row = samples_json(point);
    const std::vector<double> rate = values(point, "tflops_per_gpu");
    std::vector<double> ratios;
    for (std::size_t k = 0; k < rate.size(); ++k) ratios.push_back(rate[k] / reference[k]);
    const util::Interval e = util::interval95(ratios);
    row["scaling_efficiency"] = e.mean;
    row["scaling_efficiency_ci95"] = interval_json(e);
    series.push_back(std::move(row));
  }
  return series;
}

std::string samples_table(const nlohmann::json& s) {
  std::string out = fmt::format("{}\n", s.at("scenario").get<std::string>());
  out += fmt::format("  {} x {} GPUs ({}), {}, {}, {}\n", s.at("system").get<std::string>(), s.at("gpus").get<int>(),
                     s.at("gpu").get<std::string>(), s.at("model").get<std::string>(), s.at("stack").get<std::string>(),
                     s.at("precision").get<std::string>());
  const auto& seeds = s.at("seeds");
  out += fmt::format("  {} seeds ({} to {}): mean [95 % confidence interval of the mean]\n\n", s.at("samples").get<int>(),
                     seeds.front().get<int>(), seeds.back().get<int>());
  out += fmt::format("  model TFLOP/s per GPU  {}\n", with_interval(s, "tflops_per_gpu", 1, "{:.1f}"));
  out += fmt::format("  tokens/s per GPU       {}\n", with_interval(s, "tokens_per_s_per_gpu", 1, "{:.1f}"));
  out += fmt::format("  MFU %                  {}\n", with_interval(s, "mfu", 100, "{:.2f}"));
  out += fmt::format("  step time (s)          {}\n", with_interval(s, "step_time_s", 1, "{:.4f}"));
  out += "\n  mean step-time breakdown per pipeline rank (seconds)\n";
  const char* const parts[][2] = {{"compute", "compute_s"}, {"host launch overhead", "host_overhead_s"},
                                  {"exposed EP dispatch", "exposed_ep_dispatch_s"},
                                  {"exposed EP combine", "exposed_ep_combine_s"}, {"exposed TP", "exposed_tp_s"},
                                  {"exposed PP", "exposed_pp_s"}, {"exposed DP", "exposed_dp_s"},
                                  {"pipeline bubble", "bubble_s"}, {"optimizer", "optimizer_s"}};
  out += fmt::format("  {:<24}", "");
  for (const auto& st : s.at("breakdown")) out += fmt::format("{:>10}", fmt::format("pp{}", st.at("pp_rank").get<int>()));
  out += "\n";
  for (const auto& [label, key] : parts) {
    out += fmt::format("  {:<24}", label);
    for (const auto& st : s.at("breakdown")) out += fmt::format("{:>10.3f}", st.at(key).get<double>());
    out += "\n";
  }
  return out;
}

std::string sampled_scaling_table(const nlohmann::json& series) {
  const auto& first = series.front();
  std::string out = fmt::format("weak scaling of {} (layout fixed, global batch grows with DP)\n",
                                first.at("scenario").get<std::string>());
  out += fmt::format("  {} seeds per point: mean [95 % confidence interval of the mean]\n",
                     first.at("samples").get<int>());
  out += fmt::format("  {:>6} {:>8} {:>12} {:>28} {:>28}\n", "GPUs", "GBS", "step (s)", "TFLOP/s/GPU", "efficiency %");
  for (const auto& p : series)
    out += fmt::format("  {:>6} {:>8} {:>12.3f} {:>28} {:>28}\n", p.at("gpus").get<int>(), p.at("global_batch").get<int>(),
                       p.at("step_time_s").get<double>(), with_interval(p, "tflops_per_gpu", 1, "{:.1f}"),
                       with_interval(p, "scaling_efficiency", 100, "{:.2f}"));
  return out;
}

std::string samples_csv(const nlohmann::json& points) {
  std::string out =
      "scenario,gpus,samples,step_time_s,step_time_s_ci95_low,step_time_s_ci95_high,tflops_per_gpu,"
      "tflops_per_gpu_ci95_low,tflops_per_gpu_ci95_high,scaling_efficiency,scaling_efficiency_ci95_low,"
      "scaling_efficiency_ci95_high\n";
  const auto cell = [](const nlohmann::json& p, const char* key, int i) -> std::string {
    if (!p.contains(key) || p.at(key).is_null()) return "";
    return fmt::format("{:.9g}", i < 0 ? p.at(key).get<double>() : p.at(key)[static_cast<std::size_t>(i)].get<double>());
  };
  for (const auto& p : points.is_array() ? points : nlohmann::json::array({points})) {
    std::string name = p.at("scenario").get<std::string>();
    for (char& c : name)
      if (c == ',' || c == '"') c = ' ';
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", name, p.at("gpus").get<int>(), p.at("samples").get<int>(),
                       cell(p, "step_time_s", -1), cell(p, "step_time_s_ci95", 0), cell(p, "step_time_s_ci95", 1),
                       cell(p, "tflops_per_gpu", -1), cell(p, "tflops_per_gpu_ci95", 0),
                       cell(p, "tflops_per_gpu_ci95", 1), cell(p, "scaling_efficiency", -1),
                       cell(p, "scaling_efficiency_ci95", 0), cell(p, "scaling_efficiency_ci95", 1));
  }
  return out;
}

}  // namespace moesim::report
