#pragma once
// Helpers for the configuration tests: a private copy of the bundled configs/ in a temporary
// folder unique to each test, and a way to catch a ConfigError and look at its parts.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "moesim/config/error.hpp"

namespace moesim::test {

inline std::filesystem::path source_dir() { return MOESIM_SOURCE_DIR; }
inline std::filesystem::path bundled_configs() { return source_dir() / "configs"; }

// A temporary tree <tmp>/moesim-config-tests/<name>-<pid>-<n>/ holding a copy of configs/;
// removed when the test ends.
class TempTree {
 public:
  explicit TempTree(const std::string& name) {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() / "moesim-config-tests" /
            (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    std::filesystem::copy(bundled_configs(), configs(), std::filesystem::copy_options::recursive);
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path configs() const { return root_ / "configs"; }

  // Writes `text` to root/relative (folders created) and returns the path.
  std::filesystem::path write(const std::string& relative, const std::string& text) const {
    const auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::filesystem::path root_;
};

// Runs `f`, which must throw an `E` (`what` names it when it does not), and returns it.
template <class E>
E thrown(const std::function<void()>& f, const char* what) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  FAIL("expected " << what);
  throw std::logic_error("unreachable");
}

// Runs `f`, which must throw a ConfigError, and returns it.
inline ConfigError config_error(const std::function<void()>& f) { return thrown<ConfigError>(f, "a ConfigError"); }

}  // namespace moesim::test
