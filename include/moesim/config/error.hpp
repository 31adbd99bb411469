#pragma once
// Errors raised while reading configuration: they always name the file, the JSON path inside it
// and what was expected, so that a user can fix the input without reading code.
#include <stdexcept>
#include <string>
#include <vector>

namespace moesim {

// Messages are for people: a value quoted in one (a 16-million-character pipeline layout, a
// huge file name) is cut to its first kMaxMessageChars characters and says how much was left out.
inline constexpr std::size_t kMaxMessageChars = 2000;
std::string bounded_message(std::string text, std::size_t max_chars = kMaxMessageChars);

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
  explicit InfeasibleError(const std::string& message) : std::runtime_error(bounded_message(message)) {}
  // `problems`: each rule that fails, one sentence each (the message lists them too), for
  // callers that count failures by rule (a layout search).
  InfeasibleError(const std::string& message, std::vector<std::string> problems)
      : std::runtime_error(bounded_message(message)), problems_(std::move(problems)) {}
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

}  // namespace moesim
