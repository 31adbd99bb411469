#pragma once
// nccl-tests output as its binaries print it (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, sendrecv_perf; NVIDIA/nccl-tests src/util.cu): the header
// ("# Collective test starting: <binary>", "# nccl-tests version ... nccl-library=<code>", one
// "#  Rank" line per rank), the table (size, count, type, redop, [root,] out-of-place time, algbw,
// busbw, #wrong, in-place time, algbw, busbw, #wrong) and, with NCCL_DEBUG=INFO, NCCL's own lines
// ("NCCL_ALGO set by environment to Ring").
#include <string>
#include <vector>

namespace moesim::calibrate {

struct NcclTestsRow {
  double size_bytes = 0;     // nccl-tests' size: the per-rank buffer
  double time_us = 0;        // out-of-place, the column nccl-tests' averages start from
  double in_place_time_us = 0;
  double busbw_gbytes_per_s = 0;
  int line = 0;              // where it was read, for the residual table and errors
};

struct NcclTestsTable {
  std::string file;          // names it in errors and in the overlay's sources
  std::string op;            // moesim's name: all-reduce, all-gather, reduce-scatter, all-to-all, send-recv
  int ranks = 0;             // "#  Rank" lines, or the command line's --ranks
  std::string algo;          // NCCL_ALGO ("" = NCCL's choice), lower case as moesim names it
  std::string proto;         // NCCL_PROTO, read and reported; moesim lets NCCL's tuning choose it
  std::string nccl_version;  // "2.28" from nccl-library=22807 or "NCCL version 2.28.7"; "" = unknown
  std::vector<NcclTestsRow> rows;
};

// What the command line says when the output does not (older nccl-tests print neither the
// binary nor, with one process per rank, every rank): empty/0 = read it from the text.
struct NcclTestsHints {
  std::string op;
  int ranks = 0;
  std::string algo;
};

// Parses one output; ConfigError(file, "line N", expected) for a table it cannot read, a
// truncated row, an op moesim does not model, or a header that contradicts the hints.
NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& file, const NcclTestsHints& hints = {});

// Whether the text looks like nccl-tests output (its table header or its banner).
bool looks_like_nccl_tests(const std::string& text);

}  // namespace moesim::calibrate
