// Outputs never destroy a user's file (docs/bad-inputs.md, "Outputs that are not regular files"
// and "An output that is an input"): symbolic links are written through, devices and FIFOs are
// written to, an output naming an input or another output is refused before any work, and a
// temporary file does not outlive SIGINT.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <future>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "moesim/util/atomic_file.hpp"
#include "moesim/util/temp_files.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::listing;
using moesim::test::run_cli;
using moesim::test::slurp;
using moesim::test::TempTree;
namespace fs = std::filesystem;

namespace {

fs::path record_copy(const TempTree& tree) {
  const fs::path s = tree.root() / "s.json";
  fs::copy_file(test::source_dir() / "scenarios" / "gb300-256-record.json", s);
  return s;
}

bool no_temp_files(const fs::path& dir) {
  for (const auto& name : listing(dir))
    if (name.find(".tmp.") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("An output that is a symbolic link is written through to its target", "[safe-output]") {
  const TempTree tree("out-symlink");
  const fs::path s = record_copy(tree);
  fs::create_directories(tree.root() / "results");
  std::ofstream(tree.root() / "results" / "plan.txt") << "old";
  ::chmod((tree.root() / "results" / "plan.txt").c_str(), 0640);
  fs::create_symlink("results/plan.txt", tree.root() / "latest.txt");

  const test::CliResult r = run_cli({"plan", s.string(), "-o", (tree.root() / "latest.txt").string()}, tree.root());
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(tree.root() / "latest.txt")));
  CHECK(fs::read_symlink(tree.root() / "latest.txt") == "results/plan.txt");
  CHECK_THAT(slurp(tree.root() / "results" / "plan.txt"), Contains("TP1 CP1 PP2 VPP8 EP32"));
  struct stat st {};
  REQUIRE(::stat((tree.root() / "results" / "plan.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);  // the replaced file keeps its permissions
  CHECK(no_temp_files(tree.root()));
  CHECK(no_temp_files(tree.root() / "results"));

  // A dangling link: the file it names is created, the link stays.
  fs::create_symlink("results/new.txt", tree.root() / "next.txt");
  REQUIRE(run_cli({"plan", s.string(), "-o", (tree.root() / "next.txt").string()}, tree.root()).code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(tree.root() / "next.txt")));
  CHECK_THAT(slurp(tree.root() / "results" / "new.txt"), Contains("TP1 CP1 PP2 VPP8 EP32"));
}

TEST_CASE("An output that is a FIFO is written to, not replaced", "[safe-output]") {
  const TempTree tree("out-fifo");
  const fs::path s = record_copy(tree);
  const fs::path fifo = tree.root() / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  const test::CliResult r = run_cli({"plan", s.string(), "-o", fifo.string()}, tree.root());
  CHECK(r.code == 0);
  CHECK_THAT(reader.get(), Contains("TP1 CP1 PP2 VPP8 EP32"));
  CHECK(fs::is_fifo(fifo));
  CHECK(no_temp_files(tree.root()));
}

TEST_CASE("Output /dev/stdout writes to standard output as -o - does", "[safe-output]") {
  const TempTree tree("out-stdout");
  const fs::path s = record_copy(tree);
  const test::CliResult r = run_cli({"plan", s.string(), "-o", "/dev/stdout"}, tree.root());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("TP1 CP1 PP2 VPP8 EP32"));
  CHECK(fs::is_symlink(fs::symlink_status("/dev/stdout")));
}

TEST_CASE("A character device output is written to and stays a device", "[safe-output]") {
  const TempTree tree("out-device");
  const fs::path s = record_copy(tree);
  // A private node of /dev/full (1, 7), so that a regression replaces this one, not the system's.
  const fs::path full = tree.root() / "full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    WARN("mknod needs root: the device case is not exercised here");
    return;
  }
  const test::CliResult r = run_cli({"plan", s.string(), "-o", full.string()}, tree.root());
  CHECK(r.code == 4);
  CHECK_THAT(r.err, Contains("No space left on device"));
  struct stat st {};
  REQUIRE(::stat(full.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(no_temp_files(tree.root()));
}

TEST_CASE("An output that is a socket or a directory is refused", "[safe-output]") {
  const TempTree tree("out-directory");
  fs::create_directories(tree.root() / "dir");
  REQUIRE_THROWS_WITH(util::write_file_atomically(tree.root() / "dir", "x"), Contains("a directory"));
  CHECK(fs::is_directory(tree.root() / "dir"));
  CHECK(no_temp_files(tree.root()));
}

TEST_CASE("An output that is an input or another output is refused before any work", "[safe-output]") {
  const TempTree tree("out-clash");
  const fs::path s = record_copy(tree);
  const std::string scenario_text = slurp(s);
  const std::string s_path = s.string();
  const fs::path system = tree.configs() / "systems" / "gb300-nvl72.json";
  const std::string system_text = slurp(system);
  fs::create_hard_link(s, tree.root() / "alias.json");
  fs::create_symlink(s, tree.root() / "link.json");

  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> roles;
  };
  const std::string cfg = "--configs=" + tree.configs().string();
  const std::vector<Case> cases = {
      {{"run", s_path, "-o", s_path}, {"--output", "the scenario"}},
      {{"run", s_path, "--trace", s_path}, {"--trace", "the scenario"}},
      {{"run", s_path, "-o", (tree.root() / "alias.json").string()}, {"--output", "the scenario"}},
      {{"run", s_path, "-o", (tree.root() / "link.json").string()}, {"--output", "the scenario"}},
      {{"plan", s_path, "-o", s_path}, {"--output", "the scenario"}},
      {{"run", s_path, cfg, "-o", system.string()}, {"--output", "a configuration file it references"}},
      {{"run", s_path, "--trace", (tree.root() / "t.json").string(), "-o", (tree.root() / "t.json").string()},
       {"--trace", "--output", "another output"}},
      {{"compare", s_path, s_path, "-o", s_path}, {"--output", "compared file A"}},
  };
  for (const Case& c : cases) {
    INFO(fmt::format("{}", fmt::join(c.args, " ")));
    const test::CliResult r = run_cli(c.args, tree.root());
    CHECK(r.code == 2);
    for (const std::string& role : c.roles) CHECK_THAT(r.err, Contains(role));
    CHECK(slurp(s) == scenario_text);
    CHECK(slurp(system) == system_text);
    CHECK_FALSE(fs::exists(tree.root() / "t.json"));
  }
}

TEST_CASE("A sweep whose output directory holds its sweep file is refused", "[safe-output]") {
  const TempTree tree("out-sweep-clash");
  const fs::path s = record_copy(tree);
  const fs::path sweep = tree.write("exp/sweep.json", R"({"name": "x", "base": "../s.json", "axes": [{"gpus": [256]}]})");
  const std::string text = slurp(sweep);
  const test::CliResult r = run_cli({"sweep", sweep.string(), "-o", (tree.root() / "exp").string()}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("sweep.json") && Contains("the sweep file"));
  CHECK(slurp(sweep) == text);
  CHECK(listing(tree.root() / "exp") == std::vector<std::string>{"sweep.json"});

  // merge A B -o A would overwrite A's sweep.json before reading it.
  const test::CliResult m = run_cli({"merge", (tree.root() / "exp").string(), "-o", (tree.root() / "exp").string()},
                                    tree.root());
  CHECK(m.code == 2);
  CHECK_THAT(m.err, Contains("merge input"));
  CHECK(slurp(sweep) == text);
}

TEST_CASE("Two outputs through devices are no clash", "[safe-output]") {
  const TempTree tree("out-devnull");
  const fs::path s = record_copy(tree);
  const test::CliResult r = run_cli({"plan", s.string(), "-o", "/dev/null"}, tree.root());
  CHECK(r.code == 0);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("SIGINT removes this process's temporary files and ends the process by the signal", "[safe-output]") {
  const TempTree tree("temp-sigint");
  const fs::path tmp = tree.root() / "out.json.tmp.123";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::ofstream(tmp) << "half written";
    util::TempFileGuard guard(tmp);
    std::raise(SIGINT);
    _exit(0);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("A child does not remove its parent's temporary files", "[safe-output]") {
  const TempTree tree("temp-child");
  const fs::path tmp = tree.root() / "parent.tmp";
  std::ofstream(tmp) << "parent's";
  {
    util::TempFileGuard guard(tmp);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      std::raise(SIGTERM);
      _exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    CHECK(fs::exists(tmp));
    guard.release();
  }
  CHECK(fs::exists(tmp));  // released: kept
}
