// Issue 42, item 6: progress where a command runs long (validate's steps, search's screening,
// the seeds of --samples), on stderr only when asked or on a terminal, never in the outputs;
// control characters from user files shown, not obeyed, by the terminal; validate as JSON, and
// its table without paragraphs.
#include <catch2/catch.hpp>

#include <cstdio>

#include "moesim/batch/progress.hpp"
#include "moesim/driver/validate.hpp"
#include "moesim/util/terminal_text.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::slurp;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What a batch::Progress wrote to a temporary file.
struct CapturedProgress {
  std::FILE* file = std::tmpfile();
  ~CapturedProgress() { std::fclose(file); }
  std::string text() const {
    std::fflush(file);
    std::rewind(file);
    std::string out;
    for (int c; (c = std::fgetc(file)) != EOF;) out += static_cast<char>(c);
    return out;
  }
};

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool has_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return true;
  }
  return false;
}

// An OSC sequence that sets the window title, then a C1 CSI that clears the screen.
const std::string kHostile = "rec\x1b]0;pwned\x07ord\xc2\x9b" "2J";
const std::string kHostileShown = "rec\\u001B]0;pwned\\u0007ord\\u009B2J";

driver::ValidationRow terminal_test_row(const std::string& id, double published, double simulated, driver::RowStatus s) {
  driver::ValidationRow r;
  r.file = id + ".json";
  r.published.id = id;
  r.published.tflops_per_gpu = published;
  r.simulated_tflops = simulated;
  r.relative_error = simulated / published - 1;
  r.status = s;
  return r;
}

// One published run (the record's) in a folder of its own, no registry, experiments or
// schedules: validate's quickest complete run.
std::vector<std::string> small_validation(const TempTree& tree) {
  const fs::path published = tree.root() / "published";
  fs::create_directories(published);
  fs::copy_file(test::source_dir() / "scenarios" / "published" / "gb300-mxfp8-2606.json", published / "run.json");
  return {"validate", "--scenarios", published.string(), "--configs", (test::source_dir() / "configs").string(),
          "--fitted", "", "--experiments", "", "--schedules", "", "--frameworks", ""};
}

std::vector<std::string> cli_args_plus(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("terminal_safe escapes C0, DEL, C1 and stray bytes, and keeps text and JSON meaning", "[terminal]") {
  CHECK(util::terminal_safe(kHostile) == kHostileShown);
  CHECK(util::terminal_safe("tab\tand\nnewline stay") == "tab\tand\nnewline stay");
  CHECK(util::terminal_safe("\r\x7f") == "\\u000D\\u007F");
  CHECK(util::terminal_safe("\xff|\x9b|\xc2") == "\\xFF|\\x9B|\\xC2");  // not UTF-8: bytes shown as such
  const std::string utf8 = "± 5 % → 1,024 GPUs, 深度, \xc2\xa0 (U+00A0 is no control), \xf0\x9f\x98\x80";
  CHECK(util::terminal_safe(utf8) == utf8);
  CHECK(util::is_terminal_safe(utf8));
  CHECK_FALSE(util::is_terminal_safe(kHostile));
  CHECK_FALSE(util::is_terminal_safe("\xed\xa0\x80"));  // a UTF-16 surrogate is not UTF-8
  // A JSON text (nlohmann escapes C0 itself, but writes DEL and C1 raw) stays valid and means
  // the same: \u00XX is a JSON escape.
  const json j = {{"name", kHostile + "\x7f"}};
  const std::string shown = util::terminal_safe(j.dump());
  CHECK_FALSE(has_raw_control(shown));
  CHECK(json::parse(shown) == j);
}

TEST_CASE("batch::Progress: plain lines escaped, seed lines at most every few seconds, a throttled bar", "[progress]") {
  {
    CapturedProgress out;
    batch::Progress p(2, "sweep", "points", false, out.file);
    p.job_done("point 0 (" + kHostile + ")");
    CHECK(out.text().rfind("sweep: 1/2 done after ", 0) == 0);
    CHECK_THAT(out.text(), Contains(kHostileShown));
    CHECK_FALSE(has_raw_control(out.text()));
  }
  {
    CapturedProgress out;  // 5 seeds in well under 1,000 s: the first and the last line only
    batch::Progress p(5, "run", "seeds", false, out.file, 1000);
    for (int i = 0; i < 5; ++i) p.tick();
    p.note("point 0: ok");
    p.finish();
    const std::string text = out.text();
    CHECK(occurrences(text, "\n") == 3);
    CHECK(text.rfind("run: 1/5 seeds done after ", 0) == 0);
    CHECK_THAT(text, Contains("run: 5/5 seeds done after "));
    CHECK_THAT(text, Contains("run: 5/5 seeds done after ") && Contains(" s: point 0: ok\n"));
  }
  {
    CapturedProgress out;  // no seed lines unless asked for
    batch::Progress p(5, "run", "seeds", false, out.file, 0);
    for (int i = 0; i < 5; ++i) p.tick();
    CHECK(out.text().empty());
  }
  {
    CapturedProgress out;  // a terminal: the bar, redrawn at most every 0.1 s, and its last state
    batch::Progress p(100000, "run", "seeds", true, out.file, 5);
    for (int i = 0; i < 100000; ++i) p.tick();
    p.finish();
    const std::string text = out.text();
    CHECK(occurrences(text, "\r[") < 1000);
    CHECK_THAT(text, Contains("\r[##############################] 100000/100000 seeds, "));
    CHECK(text.back() == '\n');
  }
}

TEST_CASE("validate's table names each gap experiment in one line; --explain and the JSON carry the paragraph",
          "[terminal][validate-format]") {
  driver::Validation v;
  v.runs = {terminal_test_row("row-a", 1000, 1010, driver::RowStatus::ok),
            terminal_test_row("row-b", 1000, 900, driver::RowStatus::outside)};
  driver::ExperimentResult e;
  e.experiment.explanation = "A paragraph of several sentences. It explains a gap. It runs long.";
  e.experiment.rows = {"row-a", "row-b", "row-c"};
  e.experiment.set = {{"recipe.dispatcher", "deepep"}};
  e.supports = true;
  v.experiments = {e};

  const std::string table = driver::validation_text(v, false);
  CHECK(table.find("A paragraph") == std::string::npos);
  CHECK_THAT(table, Contains("gap experiment 1 of 1: supports (row-a and 2 more); the explanation: --explain, or "
                             "docs/validation.md \"Gap explanations\"\n"));
  // The pointer leads somewhere: docs/validation.md has that section.
  CHECK_THAT(slurp(test::source_dir() / "docs" / "validation.md"), Contains("## Gap explanations"));
  const std::string explained = driver::validation_text(v, true);
  CHECK_THAT(explained, Contains("gap experiment 1 of 1: supports (row-a and 2 more):\n  A paragraph of several "
                                 "sentences. It explains a gap. It runs long.\n"));

  const nlohmann::ordered_json j = driver::validation_json(v);
  REQUIRE(j.at("rows").size() == 2);
  CHECK(j["rows"][1]["name"] == "row-b");
  CHECK(j["rows"][1]["published"] == 1000.0);
  CHECK(j["rows"][1]["simulated"] == 900.0);
  CHECK(j["rows"][1]["error"].get<double>() == Approx(-0.1));
  CHECK(j["rows"][1]["status"] == "outside");
  CHECK(j["rows"][0]["status"] == "ok");
  CHECK(j["summary"]["predicted"] == 2);
  CHECK(j["summary"]["predicted_inside"] == 1);
  CHECK(j["summary"]["max_abs_error"].get<double>() == Approx(0.1));
  CHECK(j["summary"]["passed"] == false);
  REQUIRE(j["summary"]["failures"].size() == 1);
  CHECK_THAT(j["summary"]["failures"][0].get<std::string>(), Contains("row-b: 900.0 TFLOP/s per GPU simulated"));
  CHECK(j["experiments"][0]["supports"] == true);
  CHECK(j["experiments"][0]["set"]["recipe.dispatcher"] == "deepep");
  CHECK(j.dump() == driver::validation_json(v).dump());  // a function of the validation alone
}

TEST_CASE("validate --format json and --progress: steps on stderr, the same output with and without",
          "[progress][validate-format][end-to-end]") {
  const TempTree tree("validate-progress");
  const std::vector<std::string> args = small_validation(tree);
  const test::CliResult shown = run_cli(cli_args_plus(args, {"--format", "json", "--progress"}), tree.root());
  const test::CliResult hidden = run_cli(cli_args_plus(args, {"--format", "json"}), tree.root());
  INFO(shown.err);
  REQUIRE((shown.code == 0 || shown.code == 1));  // 1: the row is outside +-5 % (a verdict, not a failure)
  CHECK(hidden.code == shown.code);
  CHECK(shown.out == hidden.out);  // progress never reaches the output
  // 1 published run, the record's scaling, 6 sensitivity variants, the memory.
  CHECK_THAT(shown.err, Contains("validate: 1/9 done after ") && Contains(": gb300-mxfp8-2606: ") &&
                            Contains("validate: 9/9 done after ") && Contains(": memory\n"));
  CHECK(hidden.err.find("validate: ") == std::string::npos);  // stderr is no terminal here
  CHECK(run_cli(cli_args_plus(args, {"--format", "json", "--progress", "-q"}), tree.root()).err.find("validate: ") ==
        std::string::npos);

  const json j = json::parse(shown.out);
  REQUIRE(j.at("rows").size() == 1);
  const json& row = j["rows"][0];
  CHECK(row["name"] == "gb300-mxfp8-2606");
  CHECK(row["file"] == "run.json");
  CHECK(row["error"].get<double>() ==
        Approx(row["simulated"].get<double>() / row["published"].get<double>() - 1).margin(1e-12));
  CHECK(row["status"] == (std::abs(row["error"].get<double>()) <= 0.05 ? "ok" : "outside"));
  CHECK(j["summary"]["predicted"] == 1);
  CHECK(j["summary"]["passed"] == (shown.code == 0));
  CHECK(j["scaling"]["to_gpus"] == 1024);
}

TEST_CASE("run --samples, sweep --samples and search show progress when asked, the outputs unchanged",
          "[progress]") {
  const TempTree tree("batch-progress");
  const std::string record = test::record_json_path().string();
  const test::CliResult seeds = run_cli({"run", record, "--samples", "3", "--progress"}, tree.root());
  const test::CliResult silent = run_cli({"run", record, "--samples", "3"}, tree.root());
  INFO(seeds.err);
  REQUIRE(seeds.code == 0);
  CHECK(seeds.out == silent.out);
  CHECK_THAT(seeds.err, Contains("run: 1/3 seeds done after ") && Contains("run: 3/3 seeds done after "));
  CHECK(silent.err.find("seeds done") == std::string::npos);

  const fs::path sampled = tree.write("sampled.json", R"({"name": "sampled", "base": ")" + record + R"("})");
  const test::CliResult sweep_seeds = run_cli({"sweep", sampled.string(), "--samples", "2", "--progress"}, tree.root());
  const test::CliResult sweep_points = run_cli({"sweep", sampled.string(), "--samples", "2"}, tree.root());
  REQUIRE(sweep_seeds.code == 0);
  CHECK(sweep_seeds.out == sweep_points.out);
  CHECK_THAT(sweep_seeds.err, Contains("sweep: 1/2 seeds done after ") && Contains("sweep: 2/2 seeds done after "));
  // Without --progress in a log: the line per finished point only, as before.
  CHECK(sweep_points.err.find("1/2 seeds") == std::string::npos);
  CHECK_THAT(sweep_points.err, Contains("sweep: 2/2 seeds done after ") && Contains(": point 0 (point 0): "));

  // Two candidates (ep 8 and 16; the record's own ep 32 is not one, so nothing is simulated).
  const fs::path space = tree.write("search.json", R"({"name": "progress", "base": ")" + record + R"(", "simulate": 1,
    "space": {
      "layout": {"tp": [1], "pp": [2], "vpp": [8], "etp": [1], "cp": [1], "ep": [8, 16], "schedule": ["1f1b"],
                 "pipeline_layout": [""]},
      "training": {"micro_batch": [1]},
      "recipe": {"recompute": [[]], "ep_overlap": [true], "delay_wgrad": [true], "dispatcher": ["hybridep"],
                 "cuda_graphs": ["full_iteration"]}}})");
  const test::CliResult screened = run_cli({"search", space.string(), "--simulate", "0", "--progress"}, tree.root());
  const test::CliResult quiet = run_cli({"search", space.string(), "--simulate", "0"}, tree.root());
  INFO(screened.err);
  REQUIRE(screened.code == 0);
  CHECK(screened.out == quiet.out);
  CHECK_THAT(screened.err, Contains("search: screening 2 candidates: ") && Contains(" slices done after "));
  CHECK(quiet.err.find("screening") == std::string::npos);
}

TEST_CASE("Control characters from a scenario, a sweep or an option reach the terminal escaped", "[terminal]") {
  const TempTree tree("terminal-safety");
  json s = record_json();
  s["name"] = kHostile;
  const fs::path scenario = tree.write("hostile.json", s.dump(2));
  const test::CliResult table = run_cli({"run", scenario.string(), "--progress"}, tree.root());
  REQUIRE(table.code == 0);
  CHECK_FALSE(has_raw_control(table.out));
  CHECK_THAT(table.out, Contains(kHostileShown));
  CHECK_FALSE(has_raw_control(table.err));  // the progress line names the scenario too
  CHECK_THAT(table.err, Contains("simulating " + kHostileShown));
  const test::CliResult as_json = run_cli({"run", scenario.string(), "--format", "json", "-q"}, tree.root());
  REQUIRE(as_json.code == 0);
  CHECK_FALSE(has_raw_control(as_json.out));
  CHECK(json::parse(as_json.out).at("scenario") == kHostile);  // JSON keeps the name exactly

  // A sweep's name, in its Markdown on stdout and in sweep.md (its points fail before simulating).
  const fs::path sweep = tree.write("sweep.json", json{{"name", kHostile}, {"base", test::record_json_path().string()},
                                                       {"axes", {{{"path", "layout.tpp"}, {"values", {1}}}}}}
                                                      .dump());
  const test::CliResult md = run_cli({"sweep", sweep.string()}, tree.root());
  REQUIRE(md.code == 0);
  CHECK_THAT(md.out, Contains(kHostileShown));
  CHECK_FALSE(has_raw_control(md.out));
  const fs::path dir = tree.root() / "out";
  REQUIRE(run_cli({"sweep", sweep.string(), "-q", "-o", dir.string()}, tree.root()).code == 0);
  CHECK_FALSE(has_raw_control(slurp(dir / "sweep.md")));
  CHECK_FALSE(has_raw_control(slurp(dir / "sweep.csv")));
  CHECK(json::parse(slurp(dir / "sweep.json")).at("sweep") == kHostile);

  // Messages quoting a value: moesim's own (exit 2 naming --gpus) and CLI11's.
  const test::CliResult gpus = run_cli({"run", scenario.string(), "--gpus", "\x1b[2J"}, tree.root());
  CHECK(gpus.code == 2);
  CHECK_THAT(gpus.err, Contains("--gpus") && Contains("\\u001B[2J"));
  CHECK_FALSE(has_raw_control(gpus.err));
  const test::CliResult format = run_cli({"run", scenario.string(), "--format", "\x1b]0;pwned\x07"}, tree.root());
  CHECK(format.code == 2);
  CHECK_THAT(format.err, Contains("\\u001B]0;pwned\\u0007"));
  CHECK_FALSE(has_raw_control(format.err));
}
