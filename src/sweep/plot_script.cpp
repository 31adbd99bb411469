// The gnuplot script and data of a sweep's plots. Only points with a result are plotted.
#include <fmt/format.h>

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

// A gnuplot single-quoted string: only the quote itself needs escaping (doubled).
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
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

std::string series_data(const std::vector<Series>& series) {
  std::string out = "# per series: GPUs, model TFLOP/s per GPU, scaling efficiency (%), tokens per kWh\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += fmt::format("{}# {}\n", i ? "\n\n" : "", series[i].label);
    for (const Json* row : series[i].rows) {
      const Json& eff = (*row)["scaling_efficiency"];
      const Json& tokens_per_kwh = (*row)["tokens_per_kwh"];
      out += fmt::format("{} {} {} {}\n", plain_value((*row)["gpu_count"]), plain_value((*row)["tflops_per_gpu"]),
                         eff.is_number() ? fmt::format("{}", 100 * eff.get<double>()) : "?",
                         tokens_per_kwh.is_number() ? plain_value(tokens_per_kwh) : "?");
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

// Draws the current plot as PNG, then again as SVG.
std::string both_formats(const std::string& stem, const std::string& plot_commands) {
  return fmt::format("set terminal pngcairo size 960,600 font 'sans,10' noenhanced\nset output '{0}.png'\n{1}"
                     "set terminal svg size 960,600 font 'sans,10' noenhanced\nset output '{0}.svg'\nreplot\n"
                     "unset output\n\n",
                     stem, plot_commands);
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

std::string line_plot(const std::vector<Series>& series, int column) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < series.size(); ++i)
    items.push_back(fmt::format("{} index {} using 1:{} with linespoints linewidth 2 pointtype 7 title {}",
                                i ? "''" : "'plot-series.dat'", i, column, quoted(series[i].label)));
  return "plot " + fmt::format("{}", fmt::join(items, ", \\\n     ")) + "\n";
}

std::string script(const SweepResult& r, const std::vector<Series>& series) {
  std::string out = fmt::format(
      "# Plots of the sweep {}, written by moesim; redraw with `gnuplot plot.gp` in this directory.\n"
      "set datafile missing '?'\n\n",
      quoted(r.name));
  const std::string common = "set grid\nset key below horizontal reverse Left width 2\nset title " + quoted(r.name) + "\n";

  out += both_formats("tflops_per_gpu", "reset\n" + common + gpu_axis_commands(series) +
                                            "set ylabel 'model TFLOP/s per GPU (Megatron convention)'\n"
                                            "set yrange [0:*]\n" + line_plot(series, 2));
  bool any_efficiency = false;
  for (const Series& s : series)
    for (const Json* row : s.rows) any_efficiency = any_efficiency || (*row)["scaling_efficiency"].is_number();
  if (any_efficiency)  // gnuplot refuses a plot whose every value is missing
    out += both_formats("scaling_efficiency", "reset\n" + common + gpu_axis_commands(series) +
                                                  "set ylabel 'scaling efficiency (%, per-GPU throughput vs. first point)'\n"
                                                  "set offsets 0, 0, 0.5, 0.5\n" + line_plot(series, 3));
  bool any_energy = false;
  for (const Series& s : series)
    for (const Json* row : s.rows) any_energy = any_energy || (*row)["tokens_per_kwh"].is_number();
  if (any_energy)
    out += both_formats("tokens_per_kwh", "reset\n" + common + gpu_axis_commands(series) +
                                              "set ylabel 'tokens per kWh (GPUs and nodes)'\n"
                                              "set yrange [0:*]\n" + line_plot(series, 4));
  std::vector<std::string> bars;
  for (std::size_t i = 0; i < kParts.size(); ++i)
    bars.push_back(fmt::format("{} using {}{} linecolor rgb '{}' title {}", i ? "''" : "'plot-breakdown.dat'", i + 2,
                               i ? "" : ":xtic(1)", kParts[i].colour, quoted(kParts[i].title)));
  out += both_formats("step_breakdown",
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
