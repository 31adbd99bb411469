#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string csv_text(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& cells : rows) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(cells[i]);
    }
    out += '\n';
  }
  return out;
}

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
