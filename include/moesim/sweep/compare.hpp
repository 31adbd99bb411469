#pragma once
// `moesim compare A B`: two scenarios, sweep results or sweeps side by side, with B/A ratios.
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/sweep/result.hpp"
#include "moesim/sweep/run.hpp"

namespace moesim::sweep {

// One side: a sweep result (sweep.json or its directory) as it is; a sweep file, run now; or a
// scenario file, simulated now (a one-row result).
SweepResult comparison_input(const std::filesystem::path& path, const SweepOptions& options);
// The files comparison_input() reads for `path` (loading only), to check the output against.
std::vector<std::filesystem::path> comparison_input_files(const std::filesystem::path& path, const SweepOptions& options);

// Points are paired by their axis values when both sides have the same axes, by index
// otherwise; a single point on each side is paired regardless. One pair: every metric and
// breakdown part as a column per side; several pairs: one line per pair, main metrics only.
std::string compare_table(const SweepResult& a, const SweepResult& b);
Json compare_json(const SweepResult& a, const SweepResult& b);

}  // namespace moesim::sweep
