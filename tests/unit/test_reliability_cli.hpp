#pragma once
// Running the moesim binary (MOESIM_BINARY) from the reliability tests: arguments without a
// shell, standard output and error captured in files, the exit code (128 + n for signal n).
// Also a scratch folder per test (with a private configs/ copy: see config_test_support.hpp).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_test_support.hpp"

extern char** environ;

namespace moesim::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `moesim args...`; stdout goes to `stdout_path` when given (e.g. /dev/full), else to a
// file in `scratch` that is read back.
inline CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& scratch,
                         const std::string& stdout_path = "") {
  std::vector<std::string> argv_storage{MOESIM_BINARY};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto out = scratch / "cli.stdout", err = scratch / "cli.stderr";
  const std::string out_target = stdout_path.empty() ? out.string() : stdout_path;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_target.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(std::string("cannot start ") + MOESIM_BINARY);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (stdout_path.empty()) r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

// The files of `dir` (not recursive), names only, sorted: to show that a failed command left
// nothing behind (no temporary file, no half-written target).
inline std::vector<std::string> listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::filesystem::path record_json_path() { return source_dir() / "scenarios" / "gb300-256-record.json"; }

// The bundled record scenario as JSON, to patch.
inline nlohmann::json record_json() {
  std::ifstream in(source_dir() / "scenarios" / "gb300-256-record.json");
  return nlohmann::json::parse(in);
}

}  // namespace moesim::test
