#include "moesim/config/error.hpp"

#include <fmt/format.h>

namespace moesim {

std::string bounded_message(std::string text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  const std::size_t omitted = text.size() - cut;
  text.resize(cut);
  return text + fmt::format("... ({} more characters not shown)", omitted);
}

ConfigError::ConfigError(std::string file, std::string json_path, std::string expected)
    : std::runtime_error(bounded_message(fmt::format("{}: {}: {}", file, json_path, expected))),
      file_(bounded_message(std::move(file))),
      json_path_(bounded_message(std::move(json_path))),
      expected_(bounded_message(std::move(expected))) {}

}  // namespace moesim
