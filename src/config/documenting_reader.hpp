#pragma once
// A Reader that reads nothing: it records each declared key as a row of a Markdown table
// (key, type, unit, default, allowed values, meaning) and each rule as a bullet.
#include <memory>
#include <string>
#include <vector>

#include "reader.hpp"

namespace moesim::config {

class DocumentingReader final : public Reader {
 public:
  DocumentingReader();

  void number(const Key& k, double& out) override;
  void integer(const Key& k, int& out) override;
  void boolean(const Key& k, bool& out) override;
  void text(const Key& k, std::string& out) override;
  void choice(const Key& k, std::string& out, const std::vector<std::string>& allowed) override;
  void choices(const Key& k, std::vector<std::string>& out, const std::vector<std::string>& allowed) override;
  bool object(const Key& k, const Body& body) override;
  void reference(const Key& k, const std::string& kind, std::string& name_out, const Body& body) override;
  void sources(const Key& k, std::map<std::string, std::string>& out) override;
  void rule(std::string_view where, bool ok, std::string_view rule, std::string_view detail) override;

  // The table and the rules recorded so far.
  std::string markdown() const;

 private:
  struct Row {
    std::string key, type, unit, presence, allowed, meaning;
  };
  struct Table {
    std::vector<Row> rows;
    std::vector<std::string> rules;
  };
  DocumentingReader(std::shared_ptr<Table> table, std::string prefix);
  void add(const Key& k, std::string type, std::string default_value, std::string allowed);

  std::shared_ptr<Table> table_;  // shared with the readers of nested objects
  std::string prefix_;            // "" or "fabric."
};

}  // namespace moesim::config
