// Perfetto traces of simulated steps: valid JSON, tracks whose events nest, compute events that
// add up to the report's breakdown, and a small pipeline checked by hand.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "moesim/report/trace.hpp"
#include "run_support.hpp"
#include "test_docs_support.hpp"

using namespace moesim;
using nlohmann::json;

namespace {

using test::recorded;
using test::without_network_cost;

// A trace's round trip through text, the way a viewer receives it.
json traced(const driver::RunResult& r, const report::TraceOptions& o = {}) {
  return json::parse(report::trace_json(r, o).dump());
}

std::vector<json> events_of(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

// On every (process, thread) track, each event either starts after the previous ones ended or
// lies inside one of them: the nesting the trace-event format requires of complete events.
void require_nesting(const json& trace, double step_us) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const json& e : events_of(trace, "X")) {
    const double ts = e.at("ts"), dur = e.at("dur");
    REQUIRE(dur >= 0);
    tracks[{e.at("pid"), e.at("tid")}].push_back({ts, ts + dur});
  }
  const double tol = 1e-9 * step_us;
  for (auto& [track, spans] : tracks) {
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;  // parents first
    });
    std::vector<double> open;  // ends of the enclosing events
    for (const auto& [start, end] : spans) {
      while (!open.empty() && open.back() <= start + tol) open.pop_back();
      INFO("pid " << track.first << " tid " << track.second << " event at " << start << " us");
      if (!open.empty()) REQUIRE(end <= open.back() + tol);
      open.push_back(end);
    }
  }
}

// One pass of the schedule as seen on a compute track: its consecutive compute events.
struct Pass {
  std::string phase;
  int microbatch = 0;
  double start_us = 0, end_us = 0;
};

std::vector<Pass> compute_passes(const json& trace, int pid) {
  std::vector<json> xs;
  for (const json& e : events_of(trace, "X"))
    if (e.at("pid") == pid && e.at("tid") == 0 && e.at("args").contains("microbatch")) xs.push_back(e);
  std::sort(xs.begin(), xs.end(), [](const json& a, const json& b) { return a.at("ts") < b.at("ts"); });
  std::vector<Pass> passes;
  for (const json& e : xs) {
    const std::string phase = e.at("args").at("phase");
    const int mb = e.at("args").at("microbatch");
    const double end = e.at("ts").get<double>() + e.at("dur").get<double>();
    if (!passes.empty() && passes.back().phase == phase && passes.back().microbatch == mb) {
      passes.back().end_us = end;
      continue;
    }
    passes.push_back({phase, mb, e.at("ts"), end});
  }
  return passes;
}

}  // namespace

TEST_CASE("A trace is trace-event JSON with a named process per rank and a track per stream", "[trace]") {
  const auto r = recorded(test::small_moe(4));
  const json t = traced(r);
  REQUIRE(t.at("traceEvents").is_array());
  CHECK(t.at("metadata").at("scenario") == "small MoE");
  CHECK(t.at("metadata").at("fidelity") == "folded");
  CHECK(t.at("metadata").at("summarised") == false);
  CHECK(t.at("metadata").at("step_time_s").get<double>() == r.metrics.step_time_s);
  std::map<int, std::string> processes;
  int threads = 0;
  for (const json& e : events_of(t, "M")) {
    if (e.at("name") == "process_name") processes[e.at("pid")] = e.at("args").at("name");
    if (e.at("name") == "thread_name") ++threads;
  }
  REQUIRE(processes.size() == 2);
  CHECK(processes[0] == "pp0 / rank 0 (x32 replicas)");
  CHECK(threads == 2 * (workload::kStreams + 1));  // the streams and the host thread
  // Every task of the observed GPUs is an event, with its kind's arguments, and every compute
  // task that launches kernels one more on the host track.
  size_t tasks = 0, host_events = 0;
  for (const auto& st : r.sim.stages) {
    tasks += st.timeline.size();
    for (const auto& iv : st.timeline) {
      const workload::Task& task = r.program.stages[st.pp_rank].tasks[iv.task];
      host_events += task.kind == workload::TaskKind::compute && task.host_seconds > 0;
    }
  }
  const auto xs = events_of(t, "X");
  CHECK(host_events > 0);
  CHECK(xs.size() == tasks + host_events);
  bool dispatch = false;
  for (const json& e : xs) {
    const json& a = e.at("args");
    if (e.at("cat") == "compute") CHECK((a.contains("kernels") && a.contains("achieved_tflops")));
    if (e.at("cat") == "ep_dispatch") {
      dispatch = true;
      CHECK(a.at("collective") == "all_to_all");
      CHECK(a.at("group") == "ep");
      CHECK(a.at("bytes").get<double>() > 0);
    }
  }
  CHECK(dispatch);
}

TEST_CASE("Events on one track nest", "[trace]") {
  for (const Scenario& s : {test::small_moe(4), test::uniform_dense(4, 8, 2, 2)}) {
    INFO(s.name);
    const auto r = recorded(s);
    require_nesting(traced(r), r.metrics.step_time_s * 1e6);
  }
}

TEST_CASE("In full fidelity a process is the one GPU of its rank that the report shows", "[trace]") {
  const auto r = recorded(test::small_moe(2), platform::Fidelity::full);
  const json t = traced(r);
  CHECK(t.at("metadata").at("fidelity") == "full");
  std::string name;
  for (const json& e : events_of(t, "M"))
    if (e.at("name") == "process_name" && e.at("pid") == 1) name = e.at("args").at("name");
  CHECK(name == "pp1 / rank 32 (1 of 32 alike, all simulated)");
  require_nesting(t, r.metrics.step_time_s * 1e6);
}

TEST_CASE("Compute-track events add up to compute, host overhead and optimizer", "[trace]") {
  for (const Scenario& s : {test::small_moe(4), test::record_gb300()}) {
    const auto r = recorded(s);
    const json t = traced(r);
    for (const auto& st : r.sim.stages) {
      double sum_us = 0;
      for (const json& e : events_of(t, "X"))
        if (e.at("pid") == st.pp_rank && e.at("tid") == 0) sum_us += e.at("dur").get<double>();
      const auto& b = st.breakdown;
      INFO(s.name << ", pp rank " << st.pp_rank);
      CHECK(sum_us / 1e6 == Approx(b.compute_s + b.host_overhead_s + b.optimizer_s).epsilon(1e-9));
    }
  }
}

TEST_CASE("The host track shows the CPU issuing each compute segment from its start", "[trace][host]") {
  const auto r = recorded(test::small_moe(4));
  const json t = traced(r);
  const int host_track = workload::kStreams;
  std::map<std::pair<int, double>, json> compute;  // (rank, start) -> compute event
  for (const json& e : events_of(t, "X"))
    if (e.at("tid") == 0) compute[{e.at("pid").get<int>(), e.at("ts").get<double>()}] = e;
  int checked = 0;
  for (const json& e : events_of(t, "X")) {
    if (e.at("tid") != host_track) continue;
    CHECK(e.at("cat") == "host");
    const auto it = compute.find({e.at("pid").get<int>(), e.at("ts").get<double>()});
    REQUIRE(it != compute.end());
    CHECK(it->second.at("name") == e.at("name"));
    // The CPU is done issuing no later than its segment ends (max-plus: pipelined >= host).
    CHECK(e.at("dur").get<double>() <= it->second.at("dur").get<double>() + 1e-6);
    CHECK(e.at("args").at("host_us").get<double>() > 0);
    CHECK(e.at("dur").get<double>() ==
          Approx(std::min(e.at("args").at("host_us").get<double>(), it->second.at("dur").get<double>())));
    ++checked;
  }
  // Every compute segment launches kernels, so each has its host event (and the optimizer its own).
  std::size_t segments = 0;
  for (const auto& [key, e] : compute) segments += e.at("cat") == "compute";
  CHECK(static_cast<std::size_t>(checked) >= segments);
  CHECK(segments > 0);
  require_nesting(t, r.metrics.step_time_s * 1e6);
}

TEST_CASE("A 2-stage, 2-micro-batch trace is the hand-checked 1F1B timeline", "[trace]") {
  const auto r = recorded(without_network_cost(test::uniform_dense(2, 2)));
  const json t = traced(r);
  const auto p0 = compute_passes(t, 0), p1 = compute_passes(t, 1);
  REQUIRE(p0.size() == 4);
  REQUIRE(p1.size() == 4);
  // 1F1B: the first rank warms up with one forward; the last alternates from the start.
  auto order = [](const std::vector<Pass>& p) {
    std::string s;
    for (const Pass& x : p) s += fmt::format("{}{} ", x.phase == "forward" ? 'F' : 'B', x.microbatch);
    return s;
  };
  CHECK(order(p0) == "F0 F1 B0 B1 ");
  CHECK(order(p1) == "F0 B0 F1 B1 ");
  // With free messages each pass starts when its input arrives or its rank frees up:
  // pp1 F0 after pp0 F0; pp0 B0 after pp1 B0; pp1 F1 after its own B0 (pp0's F1 is earlier);
  // pp0 B1 after pp1 B1.
  const double eps = 1e-9 * r.metrics.step_time_s * 1e6;
  CHECK(p0[0].start_us == Approx(0).margin(eps));
  CHECK(p0[1].start_us == Approx(p0[0].end_us).margin(eps));
  CHECK(p1[0].start_us == Approx(p0[0].end_us).margin(eps));
  CHECK(p1[1].start_us == Approx(p1[0].end_us).margin(eps));
  CHECK(p0[2].start_us == Approx(p1[1].end_us).margin(eps));
  CHECK(p0[1].end_us < p1[1].end_us);
  CHECK(p1[2].start_us == Approx(p1[1].end_us).margin(eps));
  CHECK(p1[3].start_us == Approx(p1[2].end_us).margin(eps));
  CHECK(p0[3].start_us == Approx(p1[3].end_us).margin(eps));
  // One flow per message: two forward (pp0 -> pp1), two backward (pp1 -> pp0).
  const auto starts = events_of(t, "s"), finishes = events_of(t, "f");
  REQUIRE(starts.size() == 4);
  REQUIRE(finishes.size() == 4);
  std::map<int, std::pair<int, int>> route;  // id -> (from pid, to pid)
  for (const json& e : starts) route[e.at("id")].first = e.at("pid");
  for (const json& e : finishes) {
    route[e.at("id")].second = e.at("pid");
    CHECK(e.at("tid") == 0);
    CHECK(e.at("bp") == "e");
  }
  int forward = 0, backward = 0;
  for (const auto& [id, ends] : route) {
    forward += ends == std::pair{0, 1};
    backward += ends == std::pair{1, 0};
  }
  CHECK(forward == 2);
  CHECK(backward == 2);
}

TEST_CASE("A trace over its budget keeps the first and last micro-batches and says so", "[trace]") {
  const auto r = recorded(without_network_cost(test::uniform_dense(2, 8)));
  report::TraceOptions small;
  small.max_task_events = 20;
  const json t = traced(r, small);
  const json& m = t.at("metadata");
  REQUIRE(m.at("summarised") == true);
  const std::string kept = m.at("kept_microbatches");
  CHECK(m.at("omitted_task_events").get<int>() > 0);
  std::set<int> seen;
  for (const json& e : events_of(t, "X"))
    if (e.at("args").contains("microbatch")) seen.insert(e.at("args").at("microbatch").get<int>());
  const auto low = std::count_if(seen.begin(), seen.end(), [](int mb) { return mb < 4; });
  CHECK(low >= 1);
  CHECK(low < 4);
  CHECK(seen.size() == static_cast<size_t>(2 * low));
  for (int mb : seen) CHECK((mb < low || mb >= 8 - low));
  CHECK(kept == fmt::format("0-{} and {}-7", low - 1, 8 - low));
  CHECK(events_of(t, "s").size() == events_of(t, "f").size());
}

TEST_CASE("A run without a timeline cannot be traced", "[trace]") {
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  const auto r = driver::run_scenario(test::uniform_dense(2, 2), o);
  CHECK_THROWS_AS(report::trace_json(r), std::invalid_argument);
}

TEST_CASE("moesim run --trace writes the record step in well under 100 MB", "[trace]") {
  test::Workspace w;
  std::string err;
  REQUIRE(w.run("build/moesim run scenarios/gb300-256-record.json --trace out/step.json", &err) == 0);
  const auto path = w.dir() / "out" / "step.json";
  const auto bytes = std::filesystem::file_size(path);
  INFO("trace of the record step: " << bytes << " bytes");
  CHECK(bytes < 100'000'000);
  const json t = json::parse(test::read_text(path));
  CHECK(t.at("metadata").at("summarised") == false);
  // A trace is of one step: a weak-scaling series has none.
  CHECK(w.run("build/moesim run scenarios/gb300-256-record.json --gpus 256,512 --trace out/x.json") != 0);
}

TEST_CASE("A split-backward schedule shows its B and W passes on the compute track", "[trace][schedule]") {
  Scenario s = without_network_cost(test::uniform_dense(4, 8));
  s.layout.schedule = "zb-h1";
  const auto r = recorded(s);
  const json t = traced(r);
  require_nesting(t, r.metrics.step_time_s * 1e6);
  // ZB-H1: rank 0 runs whole backwards; rank 1 splits the first steady-state one (micro-batch 0)
  // into B and W and runs the W later.
  std::map<int, std::set<std::string>> phases;  // pid -> phases seen
  double b0_end = -1, w0_start = -1;
  for (const json& e : events_of(t, "X")) {
    if (e.at("tid") != 0 || !e.at("args").contains("microbatch")) continue;
    const std::string phase = e.at("args").at("phase");
    phases[e.at("pid")].insert(phase);
    if (e.at("pid") == 1 && e.at("args").at("microbatch") == 0) {
      const double ts = e.at("ts"), end = ts + e.at("dur").get<double>();
      if (phase == "input-gradient") b0_end = std::max(b0_end, end);
      if (phase == "weight-gradient" && w0_start < 0) {
        w0_start = ts;
        CHECK(e.at("name").get<std::string>().find(" W ") != std::string::npos);
      }
    }
  }
  CHECK(phases[0] == std::set<std::string>{"forward", "backward"});
  CHECK(phases[1].count("input-gradient") == 1);
  CHECK(phases[1].count("weight-gradient") == 1);
  REQUIRE(b0_end > 0);
  CHECK(w0_start >= b0_end);
}
