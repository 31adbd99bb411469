// Resources: inputs above a size limit, runs whose work cannot fit the machine, bounded
// messages, derived quantities checked before SimGrid, and progress on stderr.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>

#include <catch2/catch.hpp>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/work_estimate.hpp"
#include "moesim/engine/simulate.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/platform/topology.hpp"
#include "moesim/workload/step_builder.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// An environment variable set for the commands a test runs, restored afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Scenario load(const json& j) {
  return config::load_scenario_json(j, "test.json", {test::bundled_configs()});
}

}  // namespace

TEST_CASE("task_counts is the size of the program build_step builds", "[resources]") {
  json dense = record_json();
  dense["recipe"] = {{"ep_overlap", false}, {"delay_wgrad", false}};  // Megatron: no delayed wgrad without it
  json vpp1 = record_json();
  vpp1["layout"]["vpp"] = 1;
  vpp1["recipe"] = {{"ep_overlap", false}, {"delay_wgrad", false}};  // Megatron: EP overlap needs vpp > 1 at pp > 1
  json pp4 = record_json();
  pp4["layout"]["pp"] = 4;
  pp4["layout"]["vpp"] = 2;
  for (const json& j : {record_json(), dense, vpp1, pp4}) {
    const Scenario s = load(j);
    const plan::Layout l = plan::make_layout(s);
    const std::vector<long long> counts = workload::task_counts(s, l, test::default_calibration());
    const workload::StepProgram program = workload::build_step(s, l, test::default_calibration());
    REQUIRE(counts.size() == program.stages.size());
    for (std::size_t r = 0; r < counts.size(); ++r) {
      INFO(j["layout"].dump() << " pp rank " << r);
      CHECK(counts[r] == static_cast<long long>(program.stages[r].tasks.size()));
    }
  }
}

TEST_CASE("The work estimate grows with the simulated GPUs and refuses what cannot fit", "[resources]") {
  const Scenario s = load(record_json());
  const plan::Layout l = plan::make_layout(s);
  const std::vector<long long> counts = workload::task_counts(s, l, test::default_calibration());
  engine::Options folded, full;
  full.fidelity = platform::Fidelity::full;
  const driver::WorkEstimate f = driver::estimate_work(l, counts, folded);
  const driver::WorkEstimate g = driver::estimate_work(l, counts, full);
  CHECK(f.simulated_gpus == l.pp);
  CHECK(g.simulated_gpus == l.world);
  CHECK(f.simulated_tasks == counts[0] + counts[1]);
  // Full fidelity: every GPU of a pipeline rank runs that rank's program.
  CHECK(g.simulated_tasks == (counts[0] + counts[1]) * (l.world / l.pp));
  CHECK(g.memory_bytes > f.memory_bytes);

  CHECK_NOTHROW(driver::refuse_oversized(f, 1e12, false));
  REQUIRE_THROWS_WITH(driver::refuse_oversized(f, 1e3, false), Contains("--force") && Contains("tasks"));
  CHECK_NOTHROW(driver::refuse_oversized(f, 1e3, true));
  driver::WorkEstimate huge = f;
  huge.largest_rank_tasks = 1LL << 31;  // beyond what the engine's int32 task indices hold
  CHECK_THROWS_WITH(driver::refuse_oversized(huge, 1e18, true), Contains("cannot be simulated"));
}

TEST_CASE("A run whose work exceeds the machine is refused with its estimate, --force runs it", "[resources]") {
  const TempTree tree("resources-estimate");
  json big = record_json();
  big["training"]["global_batch"] = 16777216;  // 131,072 micro-batches: tens of millions of tasks
  const fs::path scenario = tree.write("big.json", big.dump(2));
  {
    const ScopedEnv limit("MOESIM_MEMORY_BYTES", "16e9");  // this project's 24 GB machine, in use
    const test::CliResult r = run_cli({"run", scenario.string()}, tree.root());
    CHECK(r.code == 3);
    CHECK_THAT(r.err, Contains("would not fit on this machine") && Contains("tasks") && Contains("GB of memory") &&
                          Contains("--force"));
  }
  const ScopedEnv tiny("MOESIM_MEMORY_BYTES", "1e6");
  const test::CliResult refused = run_cli({"run", test::record_json_path().string()}, tree.root());
  CHECK(refused.code == 3);
  const test::CliResult forced = run_cli({"run", test::record_json_path().string(), "--force"}, tree.root());
  CHECK(forced.code == 0);
}

TEST_CASE("An input larger than the limit is refused before it is read whole", "[resources]") {
  const TempTree tree("resources-input");
  const test::CliResult r = run_cli({"run", "/dev/zero"}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("/dev/zero: $: an input of at most 256 MiB"));
  // A regular file is refused from its size alone.
  const fs::path sparse = tree.root() / "sparse.json";
  { std::ofstream(sparse) << "{}"; }
  fs::resize_file(sparse, (std::uintmax_t{256} << 20) + 1);
  CHECK_THROWS_WITH(config::read_json_file(sparse), Contains("a file of at most 256 MiB"));
}

TEST_CASE("Messages are bounded however long the value they quote", "[resources]") {
  const std::string huge(1 << 20, 'x');
  const ConfigError e("f.json", "$.a", "a short value; got " + huge);
  CHECK(std::string(e.what()).size() < kMaxMessageChars + 100);
  CHECK_THAT(e.what(), Contains("more characters not shown"));
  // Not inside a UTF-8 character: the message stays valid text (sweep rows are JSON).
  std::string utf8;
  for (int i = 0; i < 1500; ++i) utf8 += "\xC3\xA9";
  const std::string cut = bounded_message(utf8, 1001);
  CHECK_NOTHROW(json(cut).dump());

  const TempTree tree("resources-message");
  json s = record_json();
  s["layout"]["pipeline_layout"] = "E" + std::string(1 << 20, 't') + "(";
  const fs::path scenario = tree.write("long.json", s.dump());
  const test::CliResult r = run_cli({"plan", scenario.string()}, tree.root());
  CHECK(r.code == 3);
  CHECK(r.err.size() < 3 * kMaxMessageChars);
}

TEST_CASE("Derived quantities are checked before they reach SimGrid", "[resources]") {
  platform::Topology t;
  t.gpus = 8;
  t.gpus_per_domain = 8;
  t.gpu_flop_per_s = 1e15;
  t.nvlink_bytes_per_s = 9e11;
  t.nic_bytes_per_s = 5e10;
  CHECK_NOTHROW(platform::check_topology(t));
  t.nic_bytes_per_s = 1e306 * 1.25e8;  // what nic_gbits_per_s: 1e306 became: inf
  try {
    platform::check_topology(t);
    FAIL("an infinite NIC bandwidth passed");
  } catch (const platform::TopologyError& e) {
    CHECK(e.system_key == "nic_gbits_per_s");
  }
  t.nic_bytes_per_s = 5e10;
  t.nvlink_latency_s = 1e302;
  CHECK_THROWS_AS(platform::check_topology(t), platform::TopologyError);

  workload::StepProgram p;
  p.stages.resize(1);
  workload::Task task;
  task.label = "a task";
  task.seconds = std::numeric_limits<double>::infinity();
  p.stages[0].tasks.push_back(task);
  CHECK_THROWS_WITH(workload::check_program(p), Contains("\"a task\": its duration"));
}

TEST_CASE("The progress hook reports the simulation's tasks from the simulating process", "[resources]") {
  const Scenario s = load(record_json());
  const plan::Layout l = plan::make_layout(s);
  const workload::StepProgram program = workload::build_step(s, l, test::default_calibration());
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  engine::Options o;
  o.progress_interval_s = 0;  // every 4,096 tasks
  o.on_progress = [fd = fds[1]](const engine::SimProgress& p) {
    const long long v[2] = {p.tasks_done, p.tasks_total};
    (void)!::write(fd, v, sizeof v);
  };
  const engine::SimResult r = engine::simulate(s, l, program, o);
  ::close(fds[1]);
  std::vector<std::pair<long long, long long>> reports;
  long long v[2];
  while (::read(fds[0], v, sizeof v) == static_cast<ssize_t>(sizeof v)) reports.emplace_back(v[0], v[1]);
  ::close(fds[0]);
  REQUIRE(reports.size() >= 2);
  for (std::size_t i = 1; i < reports.size(); ++i) CHECK(reports[i].first >= reports[i - 1].first);
  CHECK(reports.back().first == r.activities);  // the last report is the end of the simulation
  CHECK(reports.back().second == r.activities);
}

TEST_CASE("run --progress shows the simulation's progress on stderr, -q silences it", "[resources]") {
  const TempTree tree("resources-progress");
  const test::CliResult shown = run_cli({"run", test::record_json_path().string(), "--progress"}, tree.root());
  CHECK(shown.code == 0);
  CHECK_THAT(shown.err, Contains("simulating GB300 NVL72 256 GPUs") && Contains("tasks"));
  const test::CliResult quiet = run_cli({"run", test::record_json_path().string(), "--progress", "-q"}, tree.root());
  CHECK(quiet.code == 0);
  CHECK(quiet.err.find("simulating") == std::string::npos);
  // Not a terminal and not asked for: nothing (CI logs stay clean).
  const test::CliResult plain = run_cli({"run", test::record_json_path().string()}, tree.root());
  CHECK(plain.err.find("simulating") == std::string::npos);
}
