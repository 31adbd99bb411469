// The search's plot: throughput against memory per GPU for every simulated candidate, the
// Pareto front joined, the best and the reference marked, usable HBM as a dashed line.
#include <fmt/format.h>

#include <algorithm>

#include "moesim/search/writers.hpp"
#include "moesim/sweep/row.hpp"

namespace moesim::search {

namespace {

constexpr const char* kStem = "throughput_vs_memory";

std::string point(const Json& row) {
  return fmt::format("{} {} {}\n", batch::plain_value(Json(row["max_memory_per_gpu_bytes"].get<double>() / 1e9)),
                     batch::plain_value(row["tflops_per_gpu"]), batch::plain_value(row["rank"]));
}

}  // namespace

std::vector<std::string> plot_images() { return {std::string(kStem) + ".png", std::string(kStem) + ".svg"}; }

std::vector<batch::PlotFile> plot_files(const SearchResult& r) {
  std::vector<const Json*> ok, front;
  for (const Json& row : r.candidates)
    if (sweep::has_status(row, sweep::kStatusOk)) ok.push_back(&row);
  if (ok.empty()) return {};
  for (const Json* row : ok)
    if ((*row)["pareto_front"].is_boolean() && (*row)["pareto_front"].get<bool>()) front.push_back(row);
  std::stable_sort(front.begin(), front.end(), [](const Json* a, const Json* b) {
    return (*a)["max_memory_per_gpu_bytes"].get<double>() < (*b)["max_memory_per_gpu_bytes"].get<double>();
  });
  const Json* best = best_candidate(r);
  const Json* reference = reference_candidate_row(r);
  const bool reference_ok = reference && sweep::has_status(*reference, sweep::kStatusOk);

  // Blocks (gnuplot "index"): 0 every candidate, 1 the front, 2 the best, 3 the reference.
  std::string data = "# memory per GPU (GB, fullest GPU), model TFLOP/s per GPU, rank\n# every simulated candidate\n";
  for (const Json* row : ok) data += point(*row);
  data += "\n\n# Pareto front, by memory\n";
  for (const Json* row : front) data += point(*row);
  data += "\n\n# best\n" + point(*best);
  data += "\n\n# reference (the base scenario's settings)\n";
  if (reference_ok) data += point(*reference);

  std::vector<std::string> items = {
      "'plot-candidates.dat' index 0 using 1:2 with points pointtype 7 pointsize 0.8 linecolor rgb '#4e79a7' "
      "title 'simulated candidates'",
      "'' index 1 using 1:2 with linespoints linewidth 2 pointtype 7 linecolor rgb '#e15759' title 'Pareto front'",
      "'' index 2 using 1:2 with points pointtype 5 pointsize 1.8 linecolor rgb '#59a14f' title 'best'"};
  if (reference_ok)
    items.push_back("'' index 3 using 1:2 with points pointtype 9 pointsize 2 linecolor rgb '#f28e2b' "
                    "title 'reference (base scenario)'");
  const double usable_gb = (*best)["usable_memory_per_gpu_bytes"].get<double>() / 1e9;
  std::string commands = "reset\nset grid\nset key below horizontal\nset title " + batch::gnuplot_quoted(r.name) + "\n" +
                         "set xlabel 'memory per GPU (GB, fullest GPU)'\n"
                         "set ylabel 'model TFLOP/s per GPU (Megatron convention)'\n" +
                         fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dashtype 2 linecolor rgb '#7f7f7f'\n"
                                     "set label 'usable HBM' at {0}, graph 0.97 right offset -0.5, 0\n",
                                     batch::plain_value(Json(usable_gb))) +
                         "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n" +
                         "plot " + fmt::format("{}", fmt::join(items, ", \\\n     ")) + "\n";
  std::string script = fmt::format(
      "# Plot of the search {}, written by moesim; redraw with `gnuplot plot.gp` in this directory.\n\n",
      batch::gnuplot_quoted(r.name));
  script += batch::png_and_svg(kStem, commands);
  return {{"plot.gp", script}, {"plot-candidates.dat", data}};
}

}  // namespace moesim::search
