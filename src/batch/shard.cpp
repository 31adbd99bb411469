#include "moesim/batch/shard.hpp"

#include <stdexcept>

#include "moesim/config/error.hpp"

namespace moesim::batch {

namespace {

bool parse_int(const std::string& text, int& out) {
  try {
    std::size_t used = 0;
    out = std::stoi(text, &used);
    return used == text.size() && !text.empty() && text.front() != '+' && text.front() != ' ';
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& option) {
  const auto slash = text.find('/');
  Shard s;
  const bool ok = slash != std::string::npos && parse_int(text.substr(0, slash), s.index) &&
                  parse_int(text.substr(slash + 1), s.count) && s.count >= 1 && s.index >= 0 &&
                  s.index < s.count;
  if (!ok)
    throw ConfigError(option, "$", "i/n with 0 <= i < n (the i-th of n shards, counted from 0), got \"" + text + "\"");
  return s;
}

}  // namespace moesim::batch
