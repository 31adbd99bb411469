// The documentation cannot drift from the code: the configuration reference is the schema the
// parser uses, and every moesim command shown in README.md and docs/quickstart.md runs.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/config/megatron_rules.hpp"
#include "test_docs_support.hpp"

using namespace moesim;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The moesim commands of a Markdown file's ```sh blocks: each `&&`-separated part that starts
// with build/moesim. Setup and ctest lines are not ours to run; a line that ends with the
// comment `# docs-test: skip` is left out on purpose.
std::vector<std::string> moesim_commands(const std::string& markdown) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  std::string line;
  bool in_sh = false;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("```", 0) == 0) {
      in_sh = !in_sh && (t == "```sh" || t == "```bash");
      continue;
    }
    if (!in_sh || t.find("docs-test: skip") != std::string::npos) continue;
    size_t from = 0;
    while (from <= t.size()) {
      const size_t amp = t.find("&&", from);
      const std::string part = trim(t.substr(from, amp == std::string::npos ? std::string::npos : amp - from));
      if (part.rfind("build/moesim ", 0) == 0) out.push_back(part);
      if (amp == std::string::npos) break;
      from = amp + 2;
    }
  }
  return out;
}

// A full-fidelity step of 256 GPUs takes most of a minute: too slow for the unit label, so
// those commands run with the validation suite (the CI regression tests) instead.
bool slow(const std::string& command) { return command.find("--fidelity full") != std::string::npos; }

// Runs the documented commands for which `wanted` holds; returns how many ran.
int run_documented(bool (*wanted)(const std::string&)) {
  test::Workspace w;
  // The sweep subcommand is being written alongside these docs; until it is registered its
  // commands are reported, not failed.
  const bool has_sweep = w.run("build/moesim sweep --help") == 0;
  int ran = 0;
  for (const char* doc : {"README.md", "docs/quickstart.md"}) {
    const auto commands = moesim_commands(test::read_text(test::repo() / doc));
    CHECK(!commands.empty());
    for (const std::string& c : commands) {
      if (!wanted(c)) continue;
      if (!has_sweep && c.rfind("build/moesim sweep", 0) == 0) {
        WARN("not run, no sweep subcommand yet: " << c);
        continue;
      }
      std::string err;
      const auto t0 = std::chrono::steady_clock::now();
      const int code = w.run(c, &err);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO(doc << ": " << c << " (" << wall << " s)\n" << err);
      CHECK(code == 0);
      ++ran;
    }
  }
  return ran;
}

}  // namespace

TEST_CASE("Every quick moesim command in README.md and docs/quickstart.md runs", "[docs]") {
  CHECK(run_documented([](const std::string& c) { return !slow(c); }) > 0);
}

TEST_CASE("Every slow moesim command in README.md and docs/quickstart.md runs", "[docs][validation]") {
  CHECK(run_documented(slow) > 0);
}

TEST_CASE("docs/scenarios.md is the output of moesim schema", "[docs]") {
  const std::string file = test::read_text(test::repo() / "docs" / "scenarios.md");
  const std::string schema = config::schema_markdown();
  // Name the first line that differs rather than print both files.
  std::istringstream a(file), b(schema);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  INFO("docs/scenarios.md is out of date (run scripts/update_docs.sh); first difference at line "
       << line << ":\n  file:   " << la << "\n  schema: " << lb);
  CHECK((file == schema));
}

TEST_CASE("docs/megatron-rules.md lists every Megatron rule the reader enforces, in Megatron's words", "[docs]") {
  const std::string page = test::read_text(test::repo() / "docs" / "megatron-rules.md");
  REQUIRE(!config::megatron_rules().empty());
  for (const auto& rule : config::megatron_rules()) {
    INFO(rule.where << ": " << rule.quote);
    CHECK(page.find("\"" + rule.quote + "\"") != std::string::npos);
    CHECK(page.find("`" + rule.where + "`") != std::string::npos);
  }
}

TEST_CASE("Command blocks are found in Markdown", "[docs]") {
  const auto c = moesim_commands(
      "text\n```sh\nscripts/setup.sh && build/moesim run a.json\nctest --test-dir build\n"
      "build/moesim plan a.json   # layout\nbuild/moesim run b.json  # docs-test: skip\n```\n"
      "build/moesim run outside.json\n```json\nbuild/moesim run json.json\n```\n");
  REQUIRE(c.size() == 2);
  CHECK(c[0] == "build/moesim run a.json");
  CHECK(c[1] == "build/moesim plan a.json   # layout");
}
