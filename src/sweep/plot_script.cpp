// The gnuplot script and data of a sweep's plots. Only points with a result are plotted.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

struct Series {
  std::string label;
  std::vector<const Json*> rows;
};

// Series in order of their first row, so colours follow the sweep file's order.
std::vector<Series> ok_series(const SweepResult& r) {
  std::vector<Series> out;
  std::map<std::string, std::size_t> where;
  for (const Json& row : r.rows) {
    if (!has_status(row, kStatusOk)) continue;
    const Json values = series_values(r, row);
    auto [it, fresh] = where.emplace(values.dump(), out.size());
    if (fresh) {
      std::vector<std::string> parts;
      for (const Json& v : values) parts.push_back(plain_value(v));
      out.push_back(Series{parts.empty() ? "all" : fmt::format("{}", fmt::join(parts, " ")), {}});
    }
    out[it->second].rows.push_back(&row);
  }
  return out;
}

// Stacked parts in the order of the run table; they add up to the step time. Explicit colours:
// gnuplot's default cycle has eight, and a repeated colour would make two parts look like one.
struct Part {
  const char* column;
  const char* title;
  const char* colour;
};
const std::vector<Part> kParts = {
    {"compute_s", "compute", "#4e79a7"},
    {"host_overhead_s", "host launch overhead", "#f28e2b"},
    {"exposed_ep_dispatch_s", "exposed EP dispatch", "#e15759"},
    {"exposed_ep_combine_s", "exposed EP combine", "#76b7b2"},
    {"exposed_tp_s", "exposed TP", "#59a14f"},
    {"exposed_pp_s", "exposed PP", "#edc948"},
    {"exposed_dp_s", "exposed DP", "#b07aa1"},
    {"bubble_s", "pipeline bubble", "#bab0ac"},
    {"optimizer_s", "optimizer", "#9c755f"}};

bool fits(const Json& row) { return !row["fits_in_memory"].is_boolean() || row["fits_in_memory"].get<bool>(); }

// Whether any point carries 95 % intervals (--samples): then the lines get error bars.
bool with_intervals(const std::vector<Series>& series) {
  for (const Series& s : series)
    for (const Json* row : s.rows)
      if ((*row)["tflops_per_gpu_ci95"].is_array()) return true;
  return false;
}

std::string series_data(const std::vector<Series>& series) {
  const bool intervals = with_intervals(series);
  std::string out = "# per series: GPUs, model TFLOP/s per GPU, scaling efficiency (%), tokens per kWh, fits in "
                    "memory (1/0)";
  out += intervals ? "; 95 % intervals: TFLOP/s low, high, efficiency low, high\n" : "\n";
  // An interval's end, scaled; the value itself where the point has no interval.
  const auto end = [](const Json& row, const char* key, std::size_t i, double scale) -> std::string {
    const Json& ci = row[std::string(key) + "_ci95"];
    const Json& v = ci.is_array() ? ci[i] : row[key];
    return v.is_number() ? fmt::format("{}", scale * v.get<double>()) : "?";
  };
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += fmt::format("{}# {}\n", i ? "\n\n" : "", series[i].label);
    for (const Json* row : series[i].rows) {
      const Json& eff = (*row)["scaling_efficiency"];
      const Json& tokens_per_kwh = (*row)["tokens_per_kwh"];
      out += fmt::format("{} {} {} {} {}", plain_value((*row)["gpu_count"]), plain_value((*row)["tflops_per_gpu"]),
                         eff.is_number() ? fmt::format("{}", 100 * eff.get<double>()) : "?",
                         tokens_per_kwh.is_number() ? plain_value(tokens_per_kwh) : "?", fits(*row) ? 1 : 0);
      if (intervals)
        out += fmt::format(" {} {} {} {}", end(*row, "tflops_per_gpu", 0, 1), end(*row, "tflops_per_gpu", 1, 1),
                           end(*row, "scaling_efficiency", 0, 100), end(*row, "scaling_efficiency", 1, 100));
      out += "\n";
    }
  }
  return out;
}

std::string breakdown_data(const std::vector<Series>& series) {
  std::string out = "# point";
  for (const Part& part : kParts) out += fmt::format(" {}", part.column);
  out += "\n";
  for (const Series& s : series)
    for (const Json* row : s.rows) {
      std::string label = fmt::format("{} @{}", s.label, plain_value((*row)["gpu_count"]));
      for (char& c : label)
        if (c == '"') c = '\'';
      out += fmt::format("\"{}\"", label);
      for (const Part& part : kParts) out += fmt::format(" {}", plain_value((*row)[part.column]));
      out += '\n';
    }
  return out;
}

std::string gpu_axis_commands(const std::vector<Series>& series) {
  std::set<long long> gpus;
  for (const Series& s : series)
    for (const Json* row : s.rows) gpus.insert((*row)["gpu_count"].get<long long>());
  std::vector<std::string> tics;
  for (long long g : gpus) tics.push_back(std::to_string(g));
  std::string out = "set xlabel 'GPUs'\nset logscale x 2\n";
  out += fmt::format("set xtics ({})\n", fmt::join(tics, ", "));
  if (gpus.size() > 1) out += fmt::format("set xrange [{}:{}]\n", *gpus.begin() * 0.9, *gpus.rbegin() * 1.1);
  return out;
}

// One line per series (with error bars when the points carry 95 % intervals: `low` > 0 is the
// column of the interval's low end, the high end next to it); points that fit in memory filled,
// the others hollow (a layout that would run out of memory is simulated, but is no result to
// plan with), with a legend entry.
std::string line_plot(const std::vector<Series>& series, int column, int low) {
  std::vector<std::string> items;
  bool any_unfit = false;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string data = i ? "''" : "'plot-series.dat'";
    const std::size_t colour = i + 1;
    const std::string using_ = low > 0 ? fmt::format("1:{}:{}:{} with yerrorlines pointsize 0", column, low, low + 1)
                                       : fmt::format("1:{} with lines", column);
    items.push_back(fmt::format("{} index {} using {} linewidth 2 linecolor {} title {}", data, i, using_, colour,
                                batch::gnuplot_quoted(series[i].label)));
    items.push_back(fmt::format("'' index {} using 1:($5 == 1 ? ${} : NaN) with points pointtype 7 pointsize 1.2 "
                                "linecolor {} notitle", i, column, colour));
    items.push_back(fmt::format("'' index {} using 1:($5 == 0 ? ${} : NaN) with points pointtype 6 pointsize 1.6 "
                                "linewidth 2 linecolor {} notitle", i, column, colour));
    for (const Json* row : series[i].rows) any_unfit = any_unfit || !fits(*row);
  }
  if (any_unfit)
    items.push_back("NaN with points pointtype 6 pointsize 1.6 linewidth 2 linecolor rgb 'black' "
                    "title 'does not fit in memory (hollow)'");
  return "plot " + fmt::format("{}", fmt::join(items, ", \\\n     ")) + "\n";
}

// Efficiency in percent: a fixed window from 90 % (lower when the data goes below) to just
// above 100 %, so that a 0.1 % change does not look like a cliff.
std::string efficiency_range(const std::vector<Series>& series) {
  double lo = 90, hi = 101;
  for (const Series& s : series)
    for (const Json* row : s.rows)
      if (const Json& e = (*row)["scaling_efficiency"]; e.is_number()) {
        lo = std::min(lo, std::floor(100 * e.get<double>() / 5) * 5 - 5);
        hi = std::max(hi, std::ceil(100 * e.get<double>()) + 1);
      }
  return fmt::format("set yrange [{}:{}]\n", lo, hi);
}

std::string script(const SweepResult& r, const std::vector<Series>& series) {
  std::string out = fmt::format(
      "# Plots of the sweep {}, written by moesim; redraw with `gnuplot plot.gp` in this directory.\n"
      "set datafile missing '?'\n\n",
      batch::gnuplot_quoted(r.name));
  const std::string common = "set grid\nset key below horizontal reverse Left width 2\nset title " + batch::gnuplot_quoted(r.name) + "\n";
  const bool intervals = with_intervals(series);

  out += batch::png_and_svg("tflops_per_gpu", "reset\n" + common + gpu_axis_commands(series) +
                                            "set ylabel 'model TFLOP/s per GPU (Megatron convention)'\n"
                                            "set yrange [0:*]\n" + line_plot(series, 2, intervals ? 6 : 0));
  bool any_efficiency = false;
  for (const Series& s : series)
    for (const Json* row : s.rows) any_efficiency = any_efficiency || (*row)["scaling_efficiency"].is_number();
  if (any_efficiency)  // gnuplot refuses a plot whose every value is missing
    out += batch::png_and_svg("scaling_efficiency", "reset\n" + common + gpu_axis_commands(series) +
                                                  "set ylabel 'scaling efficiency (%, per-GPU throughput vs. first point)'\n" +
                                                  efficiency_range(series) + line_plot(series, 3, intervals ? 8 : 0));
  bool any_energy = false;
  for (const Series& s : series)
    for (const Json* row : s.rows) any_energy = any_energy || (*row)["tokens_per_kwh"].is_number();
  if (any_energy)
    out += batch::png_and_svg("tokens_per_kwh", "reset\n" + common + gpu_axis_commands(series) +
                                              "set ylabel 'tokens per kWh (GPUs and nodes)'\n"
                                              "set yrange [0:*]\n" + line_plot(series, 4, 0));
  std::vector<std::string> bars;
  for (std::size_t i = 0; i < kParts.size(); ++i)
    bars.push_back(fmt::format("{} using {}{} linecolor rgb '{}' title {}", i ? "''" : "'plot-breakdown.dat'", i + 2,
                               i ? "" : ":xtic(1)", kParts[i].colour, batch::gnuplot_quoted(kParts[i].title)));
  out += batch::png_and_svg("step_breakdown",
                      "reset\n" + common +
                          "set key outside right top vertical reverse Left\nset style data histograms\n"
                          "set style histogram rowstacked\nset style fill solid 0.9 border -1\nset boxwidth 0.75\n"
                          "set xtics rotate by 45 right scale 0\n"
                          "set ylabel 'step time (s), slowest pipeline rank'\nset yrange [0:*]\n"
                          "plot " + fmt::format("{}", fmt::join(bars, ", \\\n     ")) + "\n");
  return out;
}

}  // namespace

std::vector<std::string> plot_images() {
  std::vector<std::string> out;
  for (const char* stem : {"tflops_per_gpu", "scaling_efficiency", "tokens_per_kwh", "step_breakdown"})
    for (const char* ext : {".png", ".svg"}) out.push_back(std::string(stem) + ext);
  return out;
}

std::vector<std::string> plot_file_names() { return {"plot.gp", "plot-series.dat", "plot-breakdown.dat"}; }

std::vector<PlotFile> plot_files(const SweepResult& r) {
  const std::vector<Series> series = ok_series(r);
  if (series.empty()) return {};
  const std::vector<std::string> names = plot_file_names();
  return {{names[0], script(r, series)}, {names[1], series_data(series)}, {names[2], breakdown_data(series)}};
}

}  // namespace moesim::sweep

namespace moesim::sweep {

PlotOutcome draw_plots(const std::filesystem::path& dir, const SweepResult& r, const std::string& gnuplot) {
  return batch::draw_with_gnuplot(dir, plot_files(r), plot_file_names().front(), plot_images(),
                                  "no plots: no point of the sweep has a result", gnuplot);
}

}  // namespace moesim::sweep
