#include "moesim/batch/result_file.hpp"

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"

namespace moesim::batch {

namespace fs = std::filesystem;

ResultFile read_result_file(const fs::path& file_or_dir, const std::string& file_name, const std::string& what) {
  ResultFile out;
  out.file = fs::is_directory(file_or_dir) ? file_or_dir / file_name : file_or_dir;
  std::string text;
  try {
    text = config::read_text_file(out.file);
  } catch (const ConfigError& e) {
    throw ConfigError(out.file.string(), "$",
                      "an existing, readable " + what + " (" + file_name + ", or a directory holding one); " + e.expected());
  }
  config::JsonNodeBudget budget(out.file.string());
  try {
    out.json = Json::parse(text, [&budget](int, Json::parse_event_t event, Json&) {
      budget.count(event);
      return true;
    });
  } catch (const Json::parse_error& e) {
    throw ConfigError(out.file.string(), "$", std::string("well-formed JSON: ") + e.what());
  }
  return out;
}

}  // namespace moesim::batch
