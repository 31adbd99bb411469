// Reading nccl-tests output (moesim/calibrate/nccl_tests.hpp). The format is NVIDIA/nccl-tests'
// src/util.cu: writeResultHeader's two "#" header rows name the columns, each result row is
// writeBenchmarkLinePreamble's size, count, type, redop, root and then time, algbw, busbw, #wrong
// for out-of-place and in-place. Older versions print no root column; the header says which.
#include "moesim/calibrate/nccl_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "moesim/config/error.hpp"

namespace moesim::calibrate {

namespace {

std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// nccl-tests' binaries and the collectives moesim models.
const std::map<std::string, std::string>& ops_by_binary() {
  static const std::map<std::string, std::string> ops = {{"all_reduce", "all-reduce"},
                                                         {"all_gather", "all-gather"},
                                                         {"reduce_scatter", "reduce-scatter"},
                                                         {"alltoall", "all-to-all"},
                                                         {"sendrecv", "send-recv"}};
  return ops;
}

std::string op_of_binary(const std::string& program, const std::string& file, int line) {
  std::string name = program.substr(program.find_last_of('/') + 1);
  for (const char* suffix : {"_perf_mpi", "_perf"})
    if (const std::size_t at = name.rfind(suffix); at != std::string::npos && at + std::strlen(suffix) == name.size()) {
      name.resize(at);
      break;
    }
  const auto it = ops_by_binary().find(name);
  if (it == ops_by_binary().end())
    throw ConfigError(file, fmt::format("line {}", line),
                      fmt::format("the output of all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf "
                                  "or sendrecv_perf (the collectives moesim models); got {}",
                                  program));
  return it->second;
}

// NCCL_ALGO's names as moesim writes them (NVLSTree -> nvls_tree).
std::string algo_name(const std::string& nccl_name) {
  std::string a = lower(nccl_name);
  if (a == "nvlstree") return "nvls_tree";
  return a;
}

// A number as nccl-tests prints it ("%*.2f", "%*.1e"); nullopt for anything else.
std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

struct Columns {
  int size = -1, time = -1, busbw = -1, in_place_time = -1;
  std::size_t count = 0;  // named columns; a result row has at least this many fields
};

// The header row "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ...".
std::optional<Columns> header_columns(const std::vector<std::string>& f) {
  if (f.size() < 4 || f[0] != "#" || f[1] != "size" || f[2] != "count") return std::nullopt;
  Columns c;
  c.count = f.size() - 1;
  for (std::size_t i = 1; i < f.size(); ++i) {
    const int column = static_cast<int>(i) - 1;
    if (f[i] == "size") c.size = column;
    if (f[i] == "time" || f[i] == "cputime") (c.time < 0 ? c.time : c.in_place_time) = column;
    if (f[i] == "busbw" && c.busbw < 0) c.busbw = column;
  }
  if (f.back() == "timestamp") c.count -= 1;  // printed as one or more fields of its own format
  if (c.size < 0 || c.time < 0) return std::nullopt;
  return c;
}

}  // namespace

bool looks_like_nccl_tests(const std::string& text) {
  return text.find("# Collective test starting:") != std::string::npos ||
         std::regex_search(text, std::regex(R"(#\s+size\s+count\s+type)"));
}

NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& file, const NcclTestsHints& hints) {
  NcclTestsTable t;
  t.file = file;
  std::optional<Columns> columns;
  std::set<int> ranks;
  std::string op_line_text;
  int op_line = 0, line_no = 0;
  const std::regex rank_line(R"(^\s*#\s+Rank\s+(\d+)\s+Group\s+)");
  const std::regex library(R"(nccl-library=(\d+))");
  const std::regex nccl_version(R"(NCCL version (2\.\d+)(\.\d+)?)");
  const std::regex env(R"(NCCL_(ALGO|PROTO) set by environment to (\S+))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (std::regex_search(line, m, env)) {
      if (m[1] == "ALGO") t.algo = algo_name(m[2]);
      else t.proto = m[2];
      continue;
    }
    if (t.nccl_version.empty() && std::regex_search(line, m, nccl_version)) t.nccl_version = m[1];
    if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos) continue;
    const std::vector<std::string> f = fields(line);
    if (f.empty()) continue;
    if (f[0][0] == '#') {
      if (const auto at = line.find("Collective test starting:"); at != std::string::npos) {
        const auto program = fields(line.substr(at + 25));
        if (!program.empty()) op_line_text = program[0], op_line = line_no;
      } else if (std::regex_search(line, m, library) && t.nccl_version.empty()) {
        const int code = std::stoi(m[1]);  // NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch
        t.nccl_version = fmt::format("{}.{}", code / 10000, code / 100 % 100);
      } else if (std::regex_search(line, m, rank_line)) {
        ranks.insert(std::stoi(m[1]));
      } else if (auto c = header_columns(f)) {
        columns = c;
      }
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(f[0][0]))) continue;  // e.g. a launcher's own lines
    if (!columns)
      throw ConfigError(file, fmt::format("line {}", line_no),
                        "nccl-tests' column header (\"#  size  count  type  redop  root  time  algbw  busbw ...\") "
                        "before the first result row");
    if (f.size() < columns->count)
      throw ConfigError(file, fmt::format("line {}", line_no),
                        fmt::format("a result row of {} columns as the header names them; got {} (a truncated "
                                    "output?)",
                                    columns->count, f.size()));
    NcclTestsRow row;
    row.line = line_no;
    const auto size = number(f[columns->size]), time = number(f[columns->time]);
    if (!size || *size < 0 || !time || *time < 0)
      throw ConfigError(file, fmt::format("line {}", line_no),
                        fmt::format("a size in bytes and a time in microseconds; got size \"{}\", time \"{}\"",
                                    f[columns->size], f[columns->time]));
    row.size_bytes = *size;
    row.time_us = *time;
    if (columns->in_place_time >= 0) row.in_place_time_us = number(f[columns->in_place_time]).value_or(0);
    if (columns->busbw >= 0) row.busbw_gbytes_per_s = number(f[columns->busbw]).value_or(0);
    if (row.size_bytes > 0 && row.time_us > 0) t.rows.push_back(row);  // size 0 times only the call
  }

  const std::string text_op = op_line_text.empty() ? "" : op_of_binary(op_line_text, file, op_line);
  if (!hints.op.empty() && !text_op.empty() && hints.op != text_op)
    throw ConfigError(file, fmt::format("line {}", op_line),
                      fmt::format("the output of the --op given ({}); this one is {}", hints.op, text_op));
  t.op = text_op.empty() ? hints.op : text_op;
  if (t.op.empty())
    throw ConfigError(file, "line 1",
                      "nccl-tests' banner \"# Collective test starting: <binary>\" (nccl-tests 2.13 and later), or "
                      "the collective given with --op");
  const int text_ranks = static_cast<int>(ranks.size());
  if (hints.ranks > 0 && text_ranks > 0 && hints.ranks != text_ranks)
    throw ConfigError(file, "line 1",
                      fmt::format("as many \"#  Rank\" lines as --ranks ({}); the output lists {}", hints.ranks,
                                  text_ranks));
  t.ranks = hints.ranks > 0 ? hints.ranks : text_ranks;
  if (t.ranks < 2)
    throw ConfigError(file, "line 1",
                      "the ranks of the run: one \"#  Rank\" line each (printed by the process of rank 0 when it "
                      "sees them all), or --ranks; at least 2");
  if (!hints.algo.empty()) {
    if (!t.algo.empty() && t.algo != hints.algo)
      throw ConfigError(file, "line 1",
                        fmt::format("the algorithm given with --algo ({}); NCCL's log says NCCL_ALGO={}", hints.algo,
                                    t.algo));
    t.algo = hints.algo;
  }
  if (t.rows.empty())
    throw ConfigError(file, fmt::format("line {}", line_no),
                      "at least one result row with a size and a time above 0 (none found: an empty or truncated "
                      "output?)");
  return t;
}

}  // namespace moesim::calibrate
