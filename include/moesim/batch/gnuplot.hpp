#pragma once
// Plots of batch results (sweeps, searches) drawn by gnuplot. The script and its data are
// written next to the results, so a plot can be restyled and redrawn by hand (`gnuplot plot.gp`
// in that directory) without rerunning anything. gnuplot is optional: without it the results
// are complete and the message says how to get the plots.
#include <filesystem>
#include <string>
#include <vector>

namespace moesim::batch {

struct PlotFile {
  std::string name;     // in the output directory
  std::string content;
};

struct PlotOutcome {
  bool drawn = false;
  std::string message;  // what was written, or why nothing was drawn (gnuplot missing, ...)
};

// A gnuplot single-quoted string: only the quote itself needs escaping (doubled).
std::string gnuplot_quoted(const std::string& text);
// Script lines that draw the plot of `plot_commands` as <stem>.png, then again as <stem>.svg.
std::string png_and_svg(const std::string& stem, const std::string& plot_commands);

// Writes `files` into `dir` and runs `gnuplot <script>` there (`script`: the name of one of
// them); `images` are the files the script may draw, listed in the message when they exist.
// `nothing_to_plot` is the message when `files` is empty. Throws when gnuplot itself fails.
PlotOutcome draw_with_gnuplot(const std::filesystem::path& dir, const std::vector<PlotFile>& files,
                              const std::string& script, const std::vector<std::string>& images,
                              const std::string& nothing_to_plot, const std::string& gnuplot = "gnuplot");

}  // namespace moesim::batch
