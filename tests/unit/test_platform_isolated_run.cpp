// run_isolated: the fork helper every simulating test (and the engine) relies on.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "moesim/platform/isolated_run.hpp"

using moesim::platform::run_isolated;

TEST_CASE("run_isolated returns the child's string", "[platform]") {
  CHECK(run_isolated([] { return std::string("hello"); }) == "hello");
  // Large results cross the pipe whole (more than one pipe buffer).
  const std::string big(1 << 20, 'x');
  CHECK(run_isolated([&] { return big; }) == big);
}

TEST_CASE("run_isolated isolates state from the parent", "[platform]") {
  static int counter = 0;
  counter = 1;
  CHECK(run_isolated([] { return std::to_string(++counter); }) == "2");
  CHECK(counter == 1);
}

TEST_CASE("run_isolated reports a throwing child", "[platform]") {
  try {
    run_isolated([]() -> std::string { throw std::runtime_error("boom in child"); });
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("boom in child") != std::string::npos);
    CHECK(what.find("exit status 1") != std::string::npos);
  }
}

TEST_CASE("run_isolated reports an aborting child with its stderr", "[platform]") {
  try {
    run_isolated([]() -> std::string {
      std::fputs("last words\n", stderr);
      std::abort();
    });
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("signal") != std::string::npos);
    CHECK(what.find("last words") != std::string::npos);
  }
}
