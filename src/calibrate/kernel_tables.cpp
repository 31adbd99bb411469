// Reading kernel timing tables (moesim/calibrate/kernel_tables.hpp).
#include "moesim/calibrate/kernel_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "moesim/config/error.hpp"

namespace moesim::calibrate {

namespace {

std::string trimmed_lower(std::string s) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), space).base(), s.end());
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// One CSV record: fields split at commas outside double quotes ("" is a quote inside them).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// The time columns and what one unit of each is in microseconds.
const std::map<std::string, double>& time_columns() {
  static const std::map<std::string, double> columns = {
      {"time_us", 1.0}, {"time_ms", 1e3}, {"time_ns", 1e-3}, {"avg (ns)", 1e-3}, {"med (ns)", 1e-3}};
  return columns;
}

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = {"gemm", "attention_forward", "attention_backward", "copy",
                                                 "elementwise"};
  return names;
}

struct Header {
  std::map<std::string, std::size_t> at;  // column name (lower case) -> index
  std::string time_column;
  double time_unit_us = 1;
};

std::optional<Header> header_of(const std::string& line) {
  Header h;
  const std::vector<std::string> fields = csv_fields(line);
  for (std::size_t i = 0; i < fields.size(); ++i) h.at[trimmed_lower(fields[i])] = i;
  if (!h.at.count("op")) return std::nullopt;
  for (const auto& [name, unit] : time_columns())
    if (h.at.count(name)) {
      h.time_column = name;
      h.time_unit_us = unit;
      return h;
    }
  return std::nullopt;
}

bool comment_or_blank(const std::string& line) {
  const std::string t = trimmed_lower(line);
  return t.empty() || t[0] == '#';
}

}  // namespace

bool looks_like_kernel_table(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!comment_or_blank(line)) return header_of(line).has_value();
  return false;
}

KernelTable parse_kernel_table(const std::string& text, const std::string& file) {
  KernelTable t;
  t.file = file;
  std::istringstream in(text);
  std::optional<Header> header;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (comment_or_blank(line)) continue;
    const std::string where = fmt::format("line {}", n);
    if (!header) {
      header = header_of(line);
      if (!header)
        throw ConfigError(file, where, "a header row naming an \"op\" column and a time column (time_us, time_ms, "
                                       "time_ns, \"Avg (ns)\" or \"Med (ns)\")");
      continue;
    }
    const std::vector<std::string> fields = csv_fields(line);
    const auto cell = [&](const std::string& column) -> std::string {
      const auto it = header->at.find(column);
      return it == header->at.end() || it->second >= fields.size() ? "" : trimmed_lower(fields[it->second]);
    };
    // A number the row needs (> 0) or may give (0 = absent, then `fallback`).
    const auto number = [&](const std::string& column, bool required, double fallback) {
      const std::string text_value = cell(column);
      if (text_value.empty()) {
        if (required) throw ConfigError(file, where, fmt::format("a value in column {} for a {} row", column, cell("op")));
        return fallback;
      }
      char* end = nullptr;
      const double v = std::strtod(text_value.c_str(), &end);
      if (end != text_value.c_str() + text_value.size() || !std::isfinite(v) || v <= 0 || v > 1e15)
        throw ConfigError(file, where,
                          fmt::format("column {}: a positive number; got \"{}\"", column, fields[header->at.at(column)]));
      return v;
    };
    // A count (groups, heads, head dimensions): a whole number of at most 2^24.
    const auto count = [&](const std::string& column, bool required, int fallback) {
      const double v = number(column, required, fallback);
      if (v != std::floor(v) || v > (1 << 24))
        throw ConfigError(file, where, fmt::format("column {}: a whole number of at most 2^24; got \"{}\"", column,
                                                   cell(column)));
      return static_cast<int>(v);
    };
    KernelRow r;
    r.line = n;
    r.op = cell("op");
    if (std::find(op_names().begin(), op_names().end(), r.op) == op_names().end())
      throw ConfigError(file, where, fmt::format("column op: one of {}; got \"{}\"", fmt::join(op_names(), ", "), r.op));
    if (const std::string p = cell("precision"); !p.empty()) r.precision = p;
    const bool gemm = r.op == "gemm", attention = r.op.rfind("attention", 0) == 0;
    const std::vector<std::string> allowed =
        gemm ? std::vector<std::string>{"bf16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"}
             : std::vector<std::string>{"bf16", "fp8"};
    if (std::find(allowed.begin(), allowed.end(), r.precision) == allowed.end())
      throw ConfigError(file, where, fmt::format("column precision of a {} row: one of {}; got \"{}\"", r.op,
                                                 fmt::join(allowed, ", "), r.precision));
    if (const auto it = header->at.find("name"); it != header->at.end() && it->second < fields.size())
      r.name = fields[it->second];
    r.time_us = number(header->time_column, true, 0) * header->time_unit_us;
    if (gemm) {
      r.m = number("m", true, 0);
      r.k = number("k", true, 0);
      r.n = number("n", true, 0);
      r.groups = count("groups", false, 1);
    } else if (attention) {
      r.sequences = number("sequences", false, 1);
      r.seq = number("seq", true, 0);
      r.heads = count("heads", true, 0);
      r.d_qk = count("d_qk", true, 0);
      r.d_v = count("d_v", true, 0);
    } else {
      r.bytes = number("bytes", true, 0);
    }
    t.rows.push_back(r);
  }
  if (t.rows.empty())
    throw ConfigError(file, "line 1", "a kernel timing table: a header row and at least one measured kernel");
  return t;
}

}  // namespace moesim::calibrate
