// scripts/mutants.sh writes each mutant into the source file itself. A run killed where its trap
// cannot act (kill -9, the machine taken away) must not leave a mutant behind for the next build
// or commit: its journal lets the next run put the original back, and an edit made since is never
// overwritten. The script runs here on a one-file tree, with a stand-in `ninja` that kills the
// script at the mutant's build when asked and a stand-in test binary that kills every mutant.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_docs_support.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

const std::string original = "int answer() { return 1; }\n";
const std::string mutant = "int answer() { return 2; }\n";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

void write_script(const fs::path& path, const std::string& text) {
  write(path, text);
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

// The mutants script and a tree it can run on without a compiler.
void one_file_tree(const test::Workspace& w) {
  fs::create_directories(w.dir() / "scripts");
  fs::copy_file(test::repo() / "scripts" / "mutants.sh", w.dir() / "scripts" / "mutants.sh");
  write(w.dir() / "scripts" / "mutants.txt", "src/answer.cpp @@ return 1; @@ return 2; @@ [answer]\n");
  write(w.dir() / "src" / "answer.cpp", original);
  write(w.dir() / "build" / "build.ninja", "");
  // The stand-in build kills the script (as kill -9 would) once the mutant is in place.
  write_script(w.dir() / "fakebin" / "ninja",
               "#!/bin/sh\n"
               "if [ -n \"$KILL_AT_MUTANT\" ] && grep -q 'return 2' src/answer.cpp; then kill -9 $PPID; fi\n"
               "exit 0\n");
  write_script(w.dir() / "build" / "tests" / "moesim_tests", "#!/bin/sh\ngrep -q 'return 1' src/answer.cpp\n");
}

std::string mutants(const std::string& arguments) {
  return "PATH=\"$PWD/fakebin:$PATH\" bash scripts/mutants.sh " + arguments;
}

}  // namespace

TEST_CASE("A mutants run killed with its mutant in place leaves a journal, and the next run restores the original",
          "[scripts]") {
  test::Workspace w;
  one_file_tree(w);
  const auto source = w.dir() / "src" / "answer.cpp";
  const auto journal = w.dir() / "build" / "mutant-journal";

  SECTION("a run that finishes leaves the original and no journal") {
    std::string err;
    CHECK(w.run(mutants("--tested build"), &err) == 0);
    INFO(err);
    CHECK(test::read_text(source) == original);
    CHECK_FALSE(fs::exists(journal));
  }

  SECTION("a killed run is undone by the next one") {
    CHECK(w.run("KILL_AT_MUTANT=1 " + mutants("--tested build")) != 0);
    REQUIRE(test::read_text(source) == mutant);
    REQUIRE(fs::exists(journal));
    std::string err;
    CHECK(w.run(mutants("--restore build"), &err) == 0);
    INFO(err);
    CHECK(test::read_text(source) == original);
    CHECK_FALSE(fs::exists(journal));
  }

  SECTION("a file edited after the kill is left as it is, with an explained error") {
    CHECK(w.run("KILL_AT_MUTANT=1 " + mutants("--tested build")) != 0);
    const std::string edited = mutant + "// an edit made after the run was killed\n";
    write(source, edited);
    std::string err;
    CHECK(w.run(mutants("--restore build"), &err) != 0);
    CHECK(err.find("src/answer.cpp was left mutated") != std::string::npos);
    CHECK(err.find("edited since") != std::string::npos);
    CHECK(test::read_text(source) == edited);
    CHECK(fs::exists(journal));
  }
}
