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

// "> 0", ">= 1 and <= 1", "0, or >= 1 and <= 100", "" when unbounded; in JSON units.
inline std::string range_text(const Key& k) {
  std::string s;
  if (k.min) s += (k.min_exclusive ? "> " : ">= ") + format_number(*k.min);
  if (k.max) s += (s.empty() ? "" : " and ") + std::string("<= ") + format_number(*k.max);
  if (k.special && !s.empty()) s = format_number(*k.special) + ", or " + s;
  return s;
}

// The SI unit a JSON unit converts to ("GB/s" -> "B/s", "ns" -> "s", "MHz" -> "Hz"), for the
// documentation's physical range; "" for a unit it does not know, so that no range is printed in
// SI under another unit's label (it printed "0 to 1e-05 ns" for 0 to 10,000 ns).
inline std::string si_unit(const std::string& json_unit) {
  if (json_unit.find("FLOP/s") != std::string::npos) return "FLOP/s";
  if (json_unit.find("b/s") != std::string::npos || json_unit.find("B/s") != std::string::npos) return "B/s";
  if (json_unit == "GB" || json_unit == "TB" || json_unit == "MB") return "B";
  if (json_unit == "us" || json_unit == "ms" || json_unit == "ns") return "s";
  if (json_unit == "MHz" || json_unit == "GHz") return "Hz";
  if (json_unit.find("parameters") != std::string::npos) return "parameters";
  return "";
}

// The range in SI ("1e+09 to 1e+14 B/s"), for keys whose JSON unit is not SI; "" otherwise.
inline std::string si_range_text(const Key& k) {
  const std::string unit = si_unit(k.unit);
  if (k.to_si == 1.0 || !k.min || !k.max || unit.empty()) return "";
  return fmt::format("{:g} to {:g} {}", *k.min * k.to_si, *k.max * k.to_si, unit);
}

}  // namespace moesim::config
