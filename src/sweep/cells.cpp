// How points are named in every text output (Markdown, progress, compare); values are written
// as every batch output writes them (batch/table_text.hpp).
#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

std::string point_name(const std::vector<std::string>& axis_columns, const Json& row) {
  if (axis_columns.empty()) return "point " + plain_value(row["index"]);
  std::vector<std::string> parts;
  for (const std::string& c : axis_columns) parts.push_back(c + "=" + plain_value(row[c]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace moesim::sweep
