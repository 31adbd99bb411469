// The best of each system's search side by side.
#include "moesim/search/compare_systems.hpp"

#include <fmt/format.h>

#include "moesim/search/writers.hpp"

namespace moesim::search {

namespace {

struct Metric {
  const char* column;
  const char* label;
  double scale;
  const char* spec;
};

const std::vector<Metric> kMetrics = {{"tflops_per_gpu", "model TFLOP/s per GPU", 1, "{:.1f}"},
                                      {"tokens_per_s_per_gpu", "tokens/s per GPU", 1, "{:.0f}"},
                                      {"step_time_s", "step time (s)", 1, "{:.3f}"},
                                      {"mfu", "MFU (%)", 100, "{:.1f}"},
                                      {"max_memory_per_gpu_bytes", "memory per GPU (GB)", 1e-9, "{:.1f}"},
                                      {"memory_headroom_bytes", "memory headroom (GB)", 1e-9, "{:.1f}"}};

std::string shown(const Json* row, const Metric& m) {
  if (!row || !(*row)[m.column].is_number()) return "–";
  return fmt::format(fmt::runtime(m.spec), (*row)[m.column].get<double>() * m.scale);
}

Json ratio(const Json* a, const Json* b, const char* column) {
  if (!a || !b || !(*a)[column].is_number() || !(*b)[column].is_number() || (*a)[column].get<double>() == 0) return nullptr;
  return (*b)[column].get<double>() / (*a)[column].get<double>();
}

}  // namespace

std::string comparison_table(const std::vector<SearchResult>& results) {
  if (results.empty()) return "";
  std::vector<const Json*> best;
  for (const SearchResult& r : results) best.push_back(best_candidate(r));
  constexpr int kLabel = 26, kColumn = 44;
  std::string out = fmt::format("Each system at its own best layout ({} GPUs, {})\n\n", results.front().gpus,
                                results.front().model);
  const auto line = [&](const std::string& label, const std::vector<std::string>& cells, const std::vector<std::string>& ratios) {
    out += fmt::format("  {:<{}}", label, kLabel);
    for (const std::string& c : cells) out += fmt::format("{:<{}}", c, kColumn);
    for (const std::string& r : ratios) out += fmt::format("{:>10}", r);
    out += "\n";
  };
  std::vector<std::string> names, ratio_names;
  for (std::size_t i = 0; i < results.size(); ++i) {
    names.push_back(results[i].system);
    if (i > 0) ratio_names.push_back(fmt::format("#{}/#1", i + 1));
  }
  line("", names, ratio_names);
  std::vector<std::string> layouts, counts;
  for (std::size_t i = 0; i < results.size(); ++i) {
    layouts.push_back(best[i] ? candidate_name(*best[i]) : "no simulated candidate");
    counts.push_back(fmt::format("{} of {} pass, {} simulated", results[i].survivors, results[i].evaluated,
                                 results[i].candidates.size()));
  }
  line("candidates", counts, {});
  for (const Metric& m : kMetrics) {
    std::vector<std::string> cells, ratios;
    for (std::size_t i = 0; i < results.size(); ++i) {
      cells.push_back(shown(best[i], m));
      if (i == 0) continue;
      const Json x = ratio(best[0], best[i], m.column);
      ratios.push_back(x.is_number() ? fmt::format("{:.3f}", x.get<double>()) : "–");
    }
    line(m.label, cells, ratios);
  }
  out += "\n  best layout per system:\n";
  for (std::size_t i = 0; i < results.size(); ++i) out += fmt::format("    {}: {}\n", names[i], layouts[i]);
  return out;
}

Json comparison_json(const std::vector<SearchResult>& results) {
  Json j;
  j["systems"] = Json::array();
  j["ratios"] = Json::array();
  const Json* first = results.empty() ? nullptr : best_candidate(results.front());
  for (const SearchResult& r : results) {
    const Json* best = best_candidate(r);
    j["systems"].push_back({{"system", r.system},
                            {"search", r.name},
                            {"evaluated", r.evaluated},
                            {"survivors", r.survivors},
                            {"simulated", static_cast<int>(r.candidates.size())},
                            {"best", best ? *best : Json(nullptr)}});
    Json ratios = {{"system", r.system}};
    for (const Metric& m : kMetrics) ratios[m.column] = ratio(first, best, m.column);
    j["ratios"].push_back(std::move(ratios));
  }
  return j;
}

}  // namespace moesim::search
