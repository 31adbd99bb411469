#pragma once
// The files of a sweep's output directory, each a pure function of the result, so that equal
// results give equal bytes (across --jobs values, reruns, and shards merged).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/sweep/result.hpp"

namespace moesim::sweep {

// A cell's text: "" for null, strings as they are, numbers in the shortest form that reads back
// to the same value, lists and objects as JSON.
std::string plain_value(const Json& v);
// "label=gb300-bf16, gpus=512": the point's axis values; "point 3" without axes.
std::string point_name(const std::vector<std::string>& axis_columns, const Json& row);

// Lines of cells, each quoted as RFC 4180 requires (a comma, quote, CR or LF in a cell: the
// cell in double quotes, its quotes doubled); lines end with LF.
std::string csv_text(const std::vector<std::vector<std::string>>& rows);

std::string result_json_text(const SweepResult& r);  // sweep.json
std::string result_csv(const SweepResult& r);        // sweep.csv: every column, RFC 4180 quoting
std::string result_markdown(const SweepResult& r);   // sweep.md: the main columns, reasons below

// The names of the files a sweep's output directory receives (with the plots' script, data
// and images when `plots`), for checking them against the command's inputs before any work.
std::vector<std::string> output_file_names(bool plots);

// Writes sweep.json, sweep.csv and sweep.md into `dir` (created if missing), each atomically.
// std::runtime_error naming the file when one cannot be written.
void write_outputs(const std::filesystem::path& dir, const SweepResult& r);

// Rows by status ("12 points: 10 ok, 1 invalid, 1 infeasible"), for the end of a run.
std::string status_summary(const SweepResult& r);
int error_rows(const SweepResult& r);  // rows with status "error": the sweep failed

}  // namespace moesim::sweep
