#pragma once
// Errors raised while reading configuration: they always name the file, the JSON path inside it
// and what was expected, so that a user can fix the input without reading code.
#include <stdexcept>
#include <string>

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
};

}  // namespace moesim
