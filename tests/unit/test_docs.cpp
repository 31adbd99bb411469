// The documentation cannot drift from the code: the configuration reference is the schema the
// parser uses, and every moesim command shown in README.md and docs/quickstart.md runs.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
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
  int ran = 0;
  for (const char* doc : {"README.md", "docs/quickstart.md"}) {
    const auto commands = moesim_commands(test::read_text(test::repo() / doc));
    CHECK(!commands.empty());
    for (const std::string& c : commands) {
      if (!wanted(c)) continue;
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

TEST_CASE("Every quick moesim command in README.md and docs/quickstart.md runs", "[docs][end-to-end]") {
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

namespace {

// The body of the first ```<fence> block after `heading` in a Markdown file.
std::string block_after(const std::string& markdown, const std::string& heading, const std::string& fence) {
  const auto at = markdown.find(heading);
  REQUIRE(at != std::string::npos);
  const auto open = markdown.find("```" + fence + "\n", at);
  REQUIRE(open != std::string::npos);
  const auto body = open + fence.size() + 4;
  const auto close = markdown.find("\n```", body);
  REQUIRE(close != std::string::npos);
  return markdown.substr(body, close - body + 1);
}

std::string with_binary(std::string text) {
  const std::string from = "build/moesim", to = std::string("'") + MOESIM_BINARY + "'";
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("The README's CI step runs as written and passes", "[docs][validation]") {
  const std::string step = block_after(test::read_text(test::repo() / "README.md"), "## Use in CI", "shell");
  test::Workspace w;
  const auto script = w.dir() / "ci-step.sh";
  std::ofstream(script) << with_binary(step);
  std::string err;
  const int code = w.run("bash ci-step.sh", &err);
  INFO(err);
  CHECK(code == 0);
  CHECK(std::filesystem::exists(w.dir() / "ci-out" / "validation.md"));
  CHECK(std::filesystem::exists(w.dir() / "ci-out" / "scaling.csv"));
  CHECK(std::filesystem::exists(w.dir() / "ci-out" / "sweep" / "sweep.csv"));
}

TEST_CASE("The GNU parallel line of docs/sweeps.md runs as written", "[docs]") {
  const std::string doc = test::read_text(test::repo() / "docs" / "sweeps.md");
  const auto at = doc.find("\nparallel ");
  REQUIRE(at != std::string::npos);
  std::string line = doc.substr(at + 1, doc.find('\n', at + 1) - at - 1);
  line = line.substr(0, line.find("  # docs-test"));
  test::Workspace w;
  INFO(line);
  REQUIRE(w.run("command -v parallel") == 0);  // scripts/setup.sh installs it (Debian package parallel)
  std::string err;
  const int code = w.run(with_binary(line), &err);
  INFO(err);
  CHECK(code == 0);
  for (const char* name : {"sweep.json", "sweep.csv", "sweep.md"})
    CHECK(std::filesystem::exists(w.dir() / "out" / "all" / name));
}
