// A sweep keeps its finished rows on disk as it goes (sweep.rows.jsonl), and --resume continues
// an interrupted sweep to the same bytes an uninterrupted run writes.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "moesim/sweep/journal.hpp"
#include "test_reliability_cli.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::run_cli;
using moesim::test::slurp;
using moesim::test::TempTree;
namespace fs = std::filesystem;

namespace {

// `moesim args...` started without waiting; output to files in `scratch`.
pid_t start_cli(const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> storage{MOESIM_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string out = (scratch / "bg.stdout").string(), err = (scratch / "bg.stderr").string();
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

std::size_t lines(const fs::path& file) {
  const std::string text = fs::exists(file) ? slurp(file) : "";
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

sweep::Json identity() { return {{"format", "moesim-sweep-rows/1"}, {"sweep", "t"}, {"inputs", "abc"}}; }

}  // namespace

TEST_CASE("Ctrl-C keeps a sweep's finished points and --resume completes it byte for byte", "[sweep][resume]") {
  const TempTree tree("sweep-resume");
  const fs::path sweep_file = tree.write("scaling.json", R"({
    "name": "resume", "base": ")" + (test::source_dir() / "scenarios" / "gb300-256-record.json").string() + R"(",
    "axes": [{"gpus": [256, 512, 768, 1024]}]})");
  const fs::path whole = tree.root() / "whole", cut = tree.root() / "cut";
  REQUIRE(run_cli({"sweep", sweep_file.string(), "-o", whole.string(), "-j", "2", "-q"}, tree.root()).code == 0);
  CHECK_FALSE(fs::exists(whole / sweep::kJournalName));  // done: the journal has done its job

  // One point at a time; interrupted as soon as the first row is on disk.
  const pid_t pid = start_cli({"sweep", sweep_file.string(), "-o", cut.string(), "-j", "1", "-q"}, tree.root());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines(cut / sweep::kJournalName) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGINT);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  const std::size_t kept = lines(cut / sweep::kJournalName);
  REQUIRE(kept >= 2);  // the header and at least one finished point
  REQUIRE(kept < 5);   // and not all four: the run was cut short
  for (const auto& name : test::listing(cut)) CHECK(name.find(".tmp.") == std::string::npos);
  CHECK_FALSE(fs::exists(cut / "sweep.json"));

  // Without --resume the finished work is not thrown away.
  const test::CliResult again = run_cli({"sweep", sweep_file.string(), "-o", cut.string(), "-q"}, tree.root());
  CHECK(again.code == 2);
  CHECK_THAT(again.err, Contains("--resume"));

  const test::CliResult resumed = run_cli({"sweep", sweep_file.string(), "-o", cut.string(), "-q", "--resume"}, tree.root());
  REQUIRE(resumed.code == 0);
  CHECK_THAT(resumed.err, Contains("already finished"));
  test::require_same_outputs(whole, cut);
  CHECK_FALSE(fs::exists(cut / sweep::kJournalName));
}

TEST_CASE("A journal of other inputs is not resumed", "[sweep][resume]") {
  const TempTree tree("sweep-resume-changed");
  const fs::path scenario = tree.root() / "s.json";
  fs::copy_file(test::source_dir() / "scenarios" / "gb300-256-record.json", scenario);
  const fs::path sweep_file = tree.write("x.json", R"({"name": "x", "base": "s.json", "axes": [{"gpus": [20000]}]})");
  const fs::path out = tree.root() / "out";
  fs::create_directories(out);
  std::ofstream(out / sweep::kJournalName) << R"({"format":"moesim-sweep-rows/1","sweep":"x","inputs":"0"})" << "\n";
  const test::CliResult r = run_cli({"sweep", sweep_file.string(), "-o", out.string(), "--resume", "-q"}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("differs in") && Contains("inputs"));
}

TEST_CASE("The journal keeps whole rows, drops a cut-off line and reruns failed points", "[sweep][resume]") {
  const TempTree tree("journal-unit");
  std::map<int, sweep::Json> finished;
  {
    sweep::RowJournal j(tree.root(), identity(), false, finished);
    j.append({{"index", 0}, {"status", "ok"}, {"x", 0.1 + 0.2}});
    j.append({{"index", 2}, {"status", "error"}, {"x", nullptr}});
    j.append({{"index", 1}, {"status", "invalid"}, {"x", nullptr}});
  }
  const fs::path file = tree.root() / sweep::kJournalName;
  std::ofstream(file, std::ios::app) << R"({"index": 3, "sta)";  // the write the signal cut short

  REQUIRE_THROWS_WITH(sweep::RowJournal(tree.root(), identity(), false, finished), Contains("--resume"));
  {
    sweep::RowJournal j(tree.root(), identity(), true, finished);
    REQUIRE(finished.size() == 2);
    CHECK(finished.at(0)["x"].get<double>() == 0.1 + 0.2);  // numbers round-trip exactly
    CHECK(finished.at(1)["status"] == "invalid");
    CHECK(finished.count(2) == 0);  // "error": run again
    j.append({{"index", 3}, {"status", "ok"}, {"x", 1}});
  }
  CHECK(lines(file) == 5);  // header, three rows, the new one; the cut-off line is gone
  std::map<int, sweep::Json> again;
  sweep::RowJournal(tree.root(), identity(), true, again);
  CHECK(again.size() == 3);

  sweep::Json other = identity();
  other["inputs"] = "def";
  std::map<int, sweep::Json> none;
  REQUIRE_THROWS_WITH(sweep::RowJournal(tree.root(), other, true, none), Contains("differs in inputs"));
}
