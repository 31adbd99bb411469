#pragma once
// Plots of a sweep, drawn by gnuplot: TFLOP/s per GPU against GPU count (one line per series),
// the stacked step-time breakdown of every point, and scaling efficiency; each as PNG and SVG.
// The script and its data are written next to the results, so a plot can be restyled and
// redrawn by hand (`gnuplot plot.gp` in that directory) without rerunning the sweep.
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/batch/gnuplot.hpp"
#include "moesim/sweep/result.hpp"

namespace moesim::sweep {

using batch::PlotFile;
using batch::PlotOutcome;

// plot.gp, plot-series.dat and plot-breakdown.dat; empty when no point has a result.
std::vector<PlotFile> plot_files(const SweepResult& r);

// The script and data files plot_files() writes, in its order.
std::vector<std::string> plot_file_names();

// The image files plot.gp draws.
std::vector<std::string> plot_images();

// Writes plot_files() into `dir` and runs `gnuplot` there. A missing gnuplot is not an error:
// the outcome says so and how to install it. Throws when gnuplot itself fails.
PlotOutcome draw_plots(const std::filesystem::path& dir, const SweepResult& r,
                       const std::string& gnuplot = "gnuplot");

}  // namespace moesim::sweep
