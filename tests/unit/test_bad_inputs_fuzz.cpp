// Replays every input that fuzzing found (tests/fuzz/regressions/) and the seed corpus through
// the fuzzing entry point itself (tests/fuzz/fuzz_entry.hpp), built with the normal compiler,
// so that CI checks them without clang: each must end as an accepted layout (whose cost and
// platform setup passed), a ConfigError or an InfeasibleError, never another exception.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../fuzz/fuzz_entry.hpp"

using namespace moesim;

namespace {

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

fuzz::Outcome replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  return fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

TEST_CASE("every fuzzing regression input is rejected cleanly", "[fuzz][bad-inputs]") {
  const auto inputs = files_in(std::filesystem::path(MOESIM_SOURCE_DIR) / "tests" / "fuzz" / "regressions");
  REQUIRE(inputs.size() >= 5);
  for (const auto& file : inputs) {
    INFO(file.filename().string());
    fuzz::Outcome outcome{};
    REQUIRE_NOTHROW(outcome = replay(file));
    CHECK(outcome != fuzz::Outcome::layout);  // each was a bad input
  }
}

TEST_CASE("the seed corpus and the bundled scenarios go through the fuzzing entry point", "[fuzz]") {
  const std::filesystem::path root = MOESIM_SOURCE_DIR;
  int layouts = 0;
  for (const auto& dir : {root / "tests" / "fuzz" / "seeds", root / "scenarios"})
    for (const auto& file : files_in(dir)) {
      INFO(file.string());
      fuzz::Outcome outcome{};
      REQUIRE_NOTHROW(outcome = replay(file));
      layouts += outcome == fuzz::Outcome::layout;  // the program built and checked too
    }
  CHECK(layouts >= 10);  // most seeds reach a valid layout, where the interesting inputs are
}
