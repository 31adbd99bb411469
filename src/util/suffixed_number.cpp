#include "moesim/util/suffixed_number.hpp"

#include <stdexcept>

namespace moesim::util {

SuffixedNumber parse_suffixed_number(const std::string& text, const std::map<std::string, double>& multipliers) {
  SuffixedNumber n;
  std::size_t used = 0;
  try {
    n.value = std::stod(text, &used);
  } catch (const std::logic_error&) {  // std::invalid_argument ("abc"), std::out_of_range ("1e999")
    return n;
  }
  const std::string suffix = text.substr(used);
  if (!suffix.empty()) {
    const auto it = multipliers.find(suffix);
    if (it == multipliers.end()) {
      n.status = SuffixedNumber::Status::unknown_suffix;
      return n;
    }
    n.value *= it->second;
  }
  n.status = SuffixedNumber::Status::ok;
  return n;
}

}  // namespace moesim::util
