#pragma once
// The files of a sweep's output directory, each a pure function of the result, so that equal
// results give equal bytes (across --jobs values, reruns, and shards merged).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/batch/table_text.hpp"
#include "moesim/sweep/result.hpp"

namespace moesim::sweep {

// Cells are written as every batch output writes them: plain_value (a cell's text), csv_text
// (RFC 4180 lines), md_cell (a Markdown table cell).
using batch::csv_text;
using batch::md_cell;
using batch::plain_value;

// "label=gb300-bf16, gpus=512": the point's axis values; "point 3" without axes.
std::string point_name(const std::vector<std::string>& axis_columns, const Json& row);

std::string result_json_text(const SweepResult& r);  // sweep.json
std::string result_csv(const SweepResult& r);        // sweep.csv: every column, RFC 4180 quoting
std::string result_markdown(const SweepResult& r);   // sweep.md: the main columns, reasons below

// The names of the files a sweep's output directory receives (with the plots' script, data
// and images when `plots`), for checking them against the command's inputs before any work.
std::vector<std::string> output_file_names(bool plots);

// Writes sweep.json, sweep.csv and sweep.md into `dir` (created if missing), each atomically;
// the CSV and Markdown with control characters escaped (util::terminal_safe), as on stdout.
// std::runtime_error naming the file when one cannot be written.
void write_outputs(const std::filesystem::path& dir, const SweepResult& r);

// Rows by status ("12 points: 10 ok, 1 invalid, 1 infeasible"), for the end of a run.
std::string status_summary(const SweepResult& r);
int error_rows(const SweepResult& r);  // rows with status "error": the sweep failed

}  // namespace moesim::sweep
