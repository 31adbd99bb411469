#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

std::string result_csv(const SweepResult& r) {
  const std::vector<std::string> columns = row_columns(r.axis_columns);
  std::vector<std::vector<std::string>> rows{columns};
  for (const Json& row : r.rows) {
    rows.emplace_back();
    for (const std::string& c : columns) rows.back().push_back(plain_value(row[c]));
  }
  return csv_text(rows);
}

std::string result_json_text(const SweepResult& r) { return to_json(r).dump(2) + "\n"; }

}  // namespace moesim::sweep
