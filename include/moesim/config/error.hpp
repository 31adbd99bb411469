#pragma once
// Errors raised while reading configuration: they always name the file, the JSON path inside it
// and what was expected, so that a user can fix the input without reading code.
#include <stdexcept>
#include <string>
#include <vector>

namespace moesim {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, std::string json_path, std::string expected);
  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_, json_path_, expected_;
};

// A layout or memory plan that cannot run: the message explains why, in the user's terms.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // `problems`: each rule that fails, one sentence each (the message lists them too), for
  // callers that count failures by rule (a layout search).
  InfeasibleError(const std::string& message, std::vector<std::string> problems)
      : std::runtime_error(message), problems_(std::move(problems)) {}
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

}  // namespace moesim
