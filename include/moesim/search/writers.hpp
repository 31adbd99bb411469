#pragma once
// The outputs of a search, each a pure function of the result (equal results, equal bytes:
// across --jobs values, reruns, and shards merged).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/batch/gnuplot.hpp"
#include "moesim/search/result.hpp"

namespace moesim::search {

std::string result_json_text(const SearchResult& r);  // search.json
std::string result_csv(const SearchResult& r);        // search.csv: one line per simulated candidate
std::string result_markdown(const SearchResult& r);   // search.md
std::string result_table(const SearchResult& r);      // the terminal's ranked table

// search.json, search.csv, search.md, then the plot's script, data and images.
std::vector<std::string> output_file_names();

// Writes search.json, search.csv and search.md into `dir` (created if missing), each atomically
// (the CSV and Markdown with control characters escaped, util::terminal_safe),
// and the throughput-vs-memory plot (drawn when gnuplot is installed). std::runtime_error naming
// the file when one cannot be written.
batch::PlotOutcome write_outputs(const std::filesystem::path& dir, const SearchResult& r,
                                 const std::string& gnuplot = "gnuplot");

// plot.gp and plot-candidates.dat: every simulated candidate's TFLOP/s per GPU against its
// memory per GPU, the Pareto front (no other candidate both faster and smaller) joined, the
// best and the reference marked. Empty when no candidate has a simulated result.
std::vector<batch::PlotFile> plot_files(const SearchResult& r);
std::vector<std::string> plot_images();

// Progress lines and tables name a candidate the same way: "TP1 PP2 VPP8 EP32 mbs1; ...".
std::string candidate_name(const Json& row);

}  // namespace moesim::search
