// Reading DeepEP's and HybridEP's benchmark outputs (moesim/calibrate/dispatcher_tests.hpp). Only
// the lines the tests print per measured kernel are read: DeepEP's tuned best ("[tuning] Best
// ..."), HybridEP's non-permuting API and kernel lines; the permute and fused variants, the
// tuning sweeps and the correctness checks are skipped.
#include "moesim/calibrate/dispatcher_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "moesim/config/error.hpp"

namespace moesim::calibrate {

namespace {

const std::regex& deepep_marker() {
  static const std::regex r(R"(\[tuning\] Best (dispatch|combine)|\[config\] num_tokens=)");
  return r;
}
const std::regex& hybridep_section() {
  static const std::regex r(R"(=== (Torch API|Kernel) Benchmark \((FP8|BF16), (\d+) ranks\) ===)");
  return r;
}

double positive(const std::string& text, const std::string& file, int line, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0)
    throw ConfigError(file, fmt::format("line {}", line), fmt::format("{} as a positive number; got \"{}\"", what, text));
  return v;
}

int count(const std::string& text, const std::string& file, int line, const char* what) {
  const double v = positive(text, file, line, what);
  if (v != std::floor(v) || v > (1 << 24))
    throw ConfigError(file, fmt::format("line {}", line), fmt::format("{} as a whole number; got \"{}\"", what, text));
  return static_cast<int>(v);
}

// "[config] num_tokens=4096, hidden=7168, num_topk_groups=None, num_topk=8".
void read_config(const std::string& line, int n, DispatcherTestsOutput& out) {
  static const std::regex pair(R"((\w+)=([^,\s]+))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), pair); it != std::sregex_iterator(); ++it) {
    const std::string key = (*it)[1], value = (*it)[2];
    if (key == "num_tokens") out.tokens = count(value, out.file, n, "num_tokens");
    else if (key == "hidden") out.hidden = count(value, out.file, n, "hidden");
    else if (key == "num_topk") out.topk = count(value, out.file, n, "num_topk");
    else if (key == "num_topk_groups" && value != "None") out.topk_groups = count(value, out.file, n, "num_topk_groups");
  }
}

// "[tuning] Best dispatch (FP8): SMs 24, NVL chunk 6, 153.00 GB/s (NVL), t: 339.82 us" and the
// internode "..., RDMA chunk 16: 34 + 1234 us, 43.00 GB/s (RDMA), 140.10 GB/s (NVL)".
DispatcherRun read_deepep_best(const std::smatch& best, const std::string& line, int n, DispatcherTestsOutput& out) {
  static const std::regex sms(R"(SMs (\d+))"), nvl(R"(([0-9.]+) GB/s \(NVL\))"), precision(R"(\((FP8|BF16)\))"),
      intranode_time(R"(t: ([0-9.]+) us)"), internode_time(R"(([0-9.]+) \+ ([0-9.]+) us)");
  DispatcherRun run;
  run.kernel = best[1];
  run.line = n;
  const std::string where = fmt::format("line {}", n);
  std::smatch m;
  if (run.kernel == "dispatch") {
    if (!std::regex_search(line, m, precision))
      throw ConfigError(out.file, where, "the dispatch's precision, \"(FP8)\" or \"(BF16)\", as DeepEP's tests print it");
    run.fp8 = m[1] == "FP8";
  }
  if (std::regex_search(line, m, sms)) run.sms = count(m[1], out.file, n, "the SM count");
  if (!std::regex_search(line, m, nvl))
    throw ConfigError(out.file, where, "the kernel's NVLink bandwidth, \"<number> GB/s (NVL)\"");
  run.nvl_gbytes_per_s = positive(m[1], out.file, n, "the NVLink bandwidth");
  const bool internode = line.find("RDMA chunk") != std::string::npos;
  if (internode) {
    if (!std::regex_search(line, m, internode_time))
      throw ConfigError(out.file, where, "the notify and kernel times, \"<notify> + <kernel> us\"");
    run.time_us = positive(m[2], out.file, n, "the kernel time");
    out.internode = true;
  } else if (std::regex_search(line, m, intranode_time)) {
    run.time_us = positive(m[1], out.file, n, "the kernel time");
  }  // older tests print no time: it follows from the bandwidth (dispatcher_fit.cpp)
  return run;
}

}  // namespace

std::string DispatcherRun::what() const {
  return (kernel == "dispatch" ? fmt::format("dispatch ({})", fp8 ? "FP8" : "BF16") : kernel) +
         (torch_api ? ", Torch API" : "");
}

std::string dispatcher_tool_of(const std::string& text) {
  if (std::regex_search(text, hybridep_section())) return "hybridep";
  if (std::regex_search(text, deepep_marker())) return "deepep";
  return "";
}

DispatcherTestsOutput parse_dispatcher_tests(const std::string& text, const std::string& file,
                                             const DispatcherTestsHints& hints) {
  static const std::regex best(R"(\[tuning\] Best (dispatch|combine)\b)");
  static const std::regex api_line(R"(^\s*(dispatch \((FP8|BF16)\)|combine):\s+([0-9.]+) GB/s \(NVL\), t: ([0-9.]+) us)");
  static const std::regex kernel_line(
      R"(^\s*(dispatch kernel \((FP8|BF16)\)|combine kernel)\(NVL\):\s+([0-9.]+) GB/s, avg_t=([0-9.]+) us)");
  DispatcherTestsOutput out;
  out.file = file;
  out.tool = dispatcher_tool_of(text);
  if (out.tool.empty())
    throw ConfigError(file, "line 1",
                      "DeepEP's test output (\"[config] num_tokens=...\", \"[tuning] Best dispatch ...\") or HybridEP's "
                      "(\"=== Kernel Benchmark (FP8, 32 ranks) ===\")");
  std::istringstream in(text);
  std::string line;
  bool section_api = false, section_seen = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (out.tool == "deepep") {
      if (line.find("[config] num_tokens=") != std::string::npos) read_config(line, n, out);
      else if (std::regex_search(line, m, best)) out.runs.push_back(read_deepep_best(m, line, n, out));
      continue;
    }
    if (std::regex_search(line, m, hybridep_section())) {
      section_api = m[1] == "Torch API";
      section_seen = true;
      const int ranks = count(m[3], file, n, "the rank count");
      if (out.ranks != 0 && ranks != out.ranks)
        throw ConfigError(file, fmt::format("line {}", n),
                          fmt::format("one rank count per output (one run of the test); {} before, {} here", out.ranks,
                                      ranks));
      out.ranks = ranks;
      continue;
    }
    const bool api = std::regex_search(line, m, api_line);
    if (!api && !std::regex_search(line, m, kernel_line)) continue;
    if (!section_seen || section_api != api)
      throw ConfigError(file, fmt::format("line {}", n),
                        std::string("a measured line under its section header (\"=== ") +
                            (api ? "Torch API" : "Kernel") + " Benchmark (FP8, 32 ranks) ===\")");
    DispatcherRun run;
    const std::string label = m[1];
    run.kernel = label.rfind("dispatch", 0) == 0 ? "dispatch" : "combine";
    run.fp8 = m[2] == "FP8";
    run.torch_api = api;
    run.nvl_gbytes_per_s = positive(m[3], file, n, "the NVLink bandwidth");
    run.time_us = positive(m[4], file, n, "the time");
    run.line = n;
    out.runs.push_back(run);
  }
  if (out.runs.empty())
    throw ConfigError(file, "line 1",
                      out.tool == "deepep"
                          ? "at least one measured kernel, \"[tuning] Best dispatch (FP8): SMs 24, ... GB/s (NVL), t: ... "
                            "us\" (the output ends before the tuning?)"
                          : "at least one measured kernel, \"dispatch (FP8): ... GB/s (NVL), t: ... us\" or \"dispatch "
                            "kernel (FP8)(NVL): ... GB/s, avg_t=... us\" (the output ends before the benchmark?)");
  if (out.ranks == 0) out.ranks = hints.ranks;  // for outputs that do not print it (DeepEP's)
  if (out.ranks == 0)
    throw ConfigError(file, "line 1", "the rank count: DeepEP's tests do not print it; give it with --ranks");
  if (out.tool == "hybridep") {
    if (hints.tokens > 0) out.tokens = hints.tokens;
    if (hints.hidden > 0) out.hidden = hints.hidden;
    if (hints.topk > 0) out.topk = hints.topk;
    out.experts = 8 * out.ranks;  // NUM_LOCAL_EXPERTS' default
  }
  if (hints.experts > 0) out.experts = hints.experts;
  for (DispatcherRun& run : out.runs)
    if (run.sms == 0) run.sms = hints.sms;  // what DeepEP prints stays
  if (out.internode) {  // test_internode.py: one router group per node of 8 ranks, top min(nodes, 4)
    out.groups = std::max(1, out.ranks / 8);
    if (out.topk_groups == 0) out.topk_groups = std::min(out.groups, 4);
  }
  return out;
}

}  // namespace moesim::calibrate
