#pragma once
// Running the moesim binary from tests the way a reader of the docs would: in a scratch folder
// that sees the repository's scenarios and configs, so outputs never land in the source tree.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scenario_fixtures.hpp"

namespace moesim::test {

// A fresh folder with links to scenarios/, configs/ and examples/ and an empty out/; removed at the end.
class Workspace {
 public:
  Workspace() {
    std::string pattern = (std::filesystem::temp_directory_path() / "moesim-docs-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    for (const char* linked : {"scenarios", "configs", "examples"})
      std::filesystem::create_directory_symlink(repo() / linked, dir_ / linked);
    std::filesystem::create_directory(dir_ / "out");
  }
  ~Workspace() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

  // Runs `command` with the shell in the workspace; `build/moesim` at its start is the binary
  // under test. Returns the exit code; stderr is kept for messages.
  int run(const std::string& command, std::string* err = nullptr) const {
    std::string cmd = command;
    const std::string prefix = "build/moesim";
    if (cmd.rfind(prefix, 0) == 0) cmd = std::string("'") + MOESIM_BINARY + "'" + cmd.substr(prefix.size());
    const auto err_file = dir_ / "stderr.txt";
    // The newline ends a trailing `# comment` of the command before the redirections.
    const std::string shell =
        "cd '" + dir_.string() + "' && { " + cmd + "\n} >/dev/null 2>'" + err_file.string() + "'";
    const int status = std::system(shell.c_str());
    if (err) {
      std::ifstream in(err_file);
      std::stringstream text;
      text << in.rdbuf();
      *err = text.str();
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  std::filesystem::path dir_;
};


}  // namespace moesim::test
