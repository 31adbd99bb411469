// How values and points are named in every text output (CSV, Markdown, progress, compare).
#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

std::string plain_value(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // shortest round-trip form
  return v.dump();
}

std::string point_name(const std::vector<std::string>& axis_columns, const Json& row) {
  if (axis_columns.empty()) return "point " + plain_value(row["index"]);
  std::vector<std::string> parts;
  for (const std::string& c : axis_columns) parts.push_back(c + "=" + plain_value(row[c]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace moesim::sweep
