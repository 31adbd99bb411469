#pragma once
// Private to src/cli: the files one command reads and writes, checked before any work so that
// no output overwrites an input or another output (util/file_roles.hpp).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/util/file_roles.hpp"

namespace moesim::cli {

class CommandFiles {
 public:
  void input(const std::filesystem::path& file, const std::string& role);
  // The files a recorder saw: the first is `first_role` (e.g. "the scenario"), the others the
  // configs it references.
  void inputs_read(const config::InputRecorder& recorder, const std::string& first_role);
  // Nothing for "" and "-" (standard output).
  void output(const std::filesystem::path& file, const std::string& role);

  // ConfigError (exit 2) naming both roles when an output is an input or another output.
  void refuse_clashes() const;

 private:
  std::vector<util::FileRole> inputs_, outputs_;
};

}  // namespace moesim::cli
