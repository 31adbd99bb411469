#pragma once
// Numbers as people type them on a command line: "128M" bytes (nccl-tests' powers of 1024),
// "14.8T" tokens (powers of 1000). Each caller names its suffixes and words its own errors.
#include <map>
#include <string>

namespace moesim::util {

struct SuffixedNumber {
  enum class Status { ok, not_a_number, unknown_suffix };
  Status status = Status::not_a_number;
  double value = 0;  // the number times its suffix's multiplier (when ok)
};

// `text` as a number (std::stod's syntax) followed by nothing or by one of `multipliers`' keys.
SuffixedNumber parse_suffixed_number(const std::string& text, const std::map<std::string, double>& multipliers);

}  // namespace moesim::util
