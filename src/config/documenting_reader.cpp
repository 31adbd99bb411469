#include "documenting_reader.hpp"

#include <nlohmann/json.hpp>

#include "text.hpp"

namespace moesim::config {

namespace {

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code(const std::string& text) { return "`" + text + "`"; }

std::string code_list(const std::vector<std::string>& items) {
  std::vector<std::string> coded;
  for (const auto& item : items) coded.push_back(code(item));
  return join(coded);
}

}  // namespace

DocumentingReader::DocumentingReader() : table_(std::make_shared<Table>()) {}

DocumentingReader::DocumentingReader(std::shared_ptr<Table> table, std::string prefix)
    : table_(std::move(table)), prefix_(std::move(prefix)) {}

// The default shown is the target's value before reading, i.e. the spec's member initialiser.
void DocumentingReader::add(const Key& k, std::string type, std::string default_value, std::string allowed) {
  table_->rows.push_back(Row{code(prefix_ + k.name), std::move(type), k.unit,
                             k.required ? "required" : "default " + default_value, std::move(allowed), k.meaning});
}

void DocumentingReader::number(const Key& k, double& out) {
  const std::string si = si_range_text(k);
  add(k, "number", format_number(out / k.to_si), range_text(k) + (si.empty() ? "" : " (" + si + ")"));
}

void DocumentingReader::integer(const Key& k, int& out) {
  add(k, "integer", std::to_string(out), range_text(with_integer_cap(k)));
}

void DocumentingReader::boolean(const Key& k, bool& out) { add(k, "boolean", out ? "true" : "false", ""); }

void DocumentingReader::text(const Key& k, std::string& out) {
  add(k, "string", nlohmann::json(out).dump(), k.allow_empty ? "" : "non-empty");
}

void DocumentingReader::choice(const Key& k, std::string& out, const std::vector<std::string>& allowed) {
  add(k, "string", nlohmann::json(out).dump(), "one of " + code_list(allowed));
}

void DocumentingReader::choices(const Key& k, std::vector<std::string>& out, const std::vector<std::string>& allowed) {
  add(k, "list of strings", nlohmann::json(out).dump(), "distinct, from " + code_list(allowed));
}

bool DocumentingReader::object(const Key& k, const Body& body) {
  add(k, "object", "absent", "the keys below");
  DocumentingReader nested(table_, prefix_ + k.name + ".");
  body(nested);
  return false;
}

void DocumentingReader::reference(const Key& k, const std::string& kind, std::string& name_out, const Body&) {
  add(k, "string or object", nlohmann::json(name_out).dump(),
      "a file stem in `configs/" + kind + "/`, or `{\"base\": <stem>, <key>: <override>, ...}`");
}

void DocumentingReader::sources(const Key& k, std::map<std::string, std::string>&) {
  add(k, "object of strings", "{}", "keys: `*` or keys of this file");
}

void DocumentingReader::rule(std::string_view where, bool, std::string_view rule, std::string_view) {
  table_->rules.push_back(code(prefix_ + std::string(where)) + ": " + std::string(rule));
}

std::string DocumentingReader::markdown() const {
  std::string out = "| key | type | unit | required / default | allowed | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& row : table_->rows)
    out += "| " + cell(row.key) + " | " + cell(row.type) + " | " + cell(row.unit) + " | " + cell(row.presence) +
           " | " + cell(row.allowed) + " | " + cell(row.meaning) + " |\n";
  if (!table_->rules.empty()) {
    out += "\nRules checked after reading:\n\n";
    for (const auto& rule : table_->rules) out += "- " + rule + "\n";
  }
  return out;
}

}  // namespace moesim::config
