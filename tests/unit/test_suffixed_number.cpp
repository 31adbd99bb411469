// Command-line numbers with a multiplier suffix, as `collective --bytes` and `campaign --tokens`
// read them.
#include <catch2/catch.hpp>

#include "moesim/util/suffixed_number.hpp"

using moesim::util::parse_suffixed_number;
using Status = moesim::util::SuffixedNumber::Status;

TEST_CASE("a suffixed number is the number times its suffix's multiplier", "[util]") {
  const std::map<std::string, double> binary = {{"K", 1024.0}, {"M", 1024.0 * 1024}};
  CHECK(parse_suffixed_number("128M", binary).value == 128.0 * 1024 * 1024);
  CHECK(parse_suffixed_number("0.5K", binary).value == 512.0);
  CHECK(parse_suffixed_number("3", binary).value == 3.0);
  CHECK(parse_suffixed_number("14.8T", {{"T", 1e12}}).value == Approx(14.8e12));
  CHECK(parse_suffixed_number("128M", binary).status == Status::ok);
  // Not a number, a suffix not offered, two suffixes, a suffix alone.
  CHECK(parse_suffixed_number("abc", binary).status == Status::not_a_number);
  CHECK(parse_suffixed_number("1e999", binary).status == Status::not_a_number);
  CHECK(parse_suffixed_number("M", binary).status == Status::not_a_number);
  CHECK(parse_suffixed_number("128X", binary).status == Status::unknown_suffix);
  CHECK(parse_suffixed_number("128MM", binary).status == Status::unknown_suffix);
  CHECK(parse_suffixed_number("128m", binary).status == Status::unknown_suffix);
}
