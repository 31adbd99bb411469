#pragma once
// Small text helpers shared by the parsing and documenting readers, so that an error message
// and the documentation describe a key's range in the same words.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reader.hpp"

namespace moesim::config {

inline std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// Shortest form that reads back the same ("2450", "0.05", "1e-06").
inline std::string format_number(double v) { return fmt::format("{}", v); }

// "> 0", ">= 1 and <= 1", "" when unbounded; in JSON units.
inline std::string range_text(const Key& k) {
  std::string s;
  if (k.min) s += (k.min_exclusive ? "> " : ">= ") + format_number(*k.min);
  if (k.max) s += (s.empty() ? "" : " and ") + std::string("<= ") + format_number(*k.max);
  return s;
}

}  // namespace moesim::config
