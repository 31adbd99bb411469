// Fitting NCCL parameters to nccl-tests tables (moesim/calibrate/nccl_fit.hpp).
#include "moesim/calibrate/nccl_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::calibrate {

namespace {

using nlohmann::json;

struct NcclKey {
  const char* key;  // under the system's "nccl"
  double NcclSpec::*field;
  Term term;
  double lower, upper;  // the schema's range
  bool fit_from_zero;   // 0 is a value of the same mechanism (not "another model")
};

// The NCCL keys of a system (configs/systems, src/config/schema_system.cpp) a table can move.
// A rate at 0 means "no such limit" or "NCCL's own model": a different mechanism, never fitted
// from there; a fixed cost at 0 is fitted only where 0 means "none" (call_overhead_us).
constexpr NcclKey kNcclKeys[] = {
    {"nvlink_efficiency", &NcclSpec::nvlink_efficiency, Term::bandwidth, 0.01, 1, false},
    {"nvls_efficiency", &NcclSpec::nvls_efficiency, Term::bandwidth, 0.01, 1, false},
    {"net_efficiency", &NcclSpec::net_efficiency, Term::bandwidth, 0.01, 1, false},
    {"p2p_simple_channel_gbytes_per_s", &NcclSpec::p2p_simple_channel_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"p2p_simple_warp_gbytes_per_s", &NcclSpec::p2p_simple_warp_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"p2p_ll_channel_gbytes_per_s", &NcclSpec::p2p_ll_channel_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"call_overhead_us", &NcclSpec::call_overhead_us, Term::fixed, 0, 1000, true},
    {"p2p_simple_latency_us", &NcclSpec::p2p_simple_latency_us, Term::fixed, 0, 1000, false},
    {"p2p_ll_latency_us", &NcclSpec::p2p_ll_latency_us, Term::fixed, 0, 1000, false},
    {"p2p_host_call_us", &NcclSpec::p2p_host_call_us, Term::fixed, 0, 100, false},
};

Pricing price(const CalibrationTarget& target, const NcclTestsTable& t, const json& overrides) {
  driver::CollectiveRequest r;
  r.system = target.system;
  r.op = t.op;
  r.ranks = t.ranks;
  r.gpus_per_domain = target.gpus_per_domain;
  r.algo = t.algo;
  r.nccl_version = t.nccl_version;
  r.system_overrides = overrides.value("system", json::object());
  std::vector<std::string> sizes;
  for (const NcclTestsRow& row : t.rows) sizes.push_back(fmt::format("{:.0f}", row.size_bytes));
  r.sizes = fmt::format("{}", fmt::join(sizes, ","));
  Pricing p;
  try {
    const driver::PlannedCollective planned = driver::plan_collective_request(r, target.configs_dir);
    for (const platform::CollectivePlan& plan : planned.plans) {
      p.seconds.push_back(plan.seconds);
      p.notes.push_back(fmt::format("{}/{}", platform::to_string(plan.algorithm), platform::to_string(plan.protocol)));
    }
  } catch (const driver::CollectiveOptionError& e) {
    throw ConfigError(t.file, "line 1", fmt::format("a run moesim can price on {} ({}: {})", target.system,
                                                      e.option(), e.what()));
  }
  return p;
}

}  // namespace

std::vector<MeasuredTable> nccl_measured_tables(const CalibrationTarget& target,
                                                const std::vector<NcclTestsTable>& tables) {
  const SystemSpec system = config::load_system(target.system, target.configs_dir);
  std::vector<Candidate> candidates;
  for (const NcclKey& k : kNcclKeys) {
    const double bundled = system.nccl.*k.field;
    if (bundled == 0 && !k.fit_from_zero) continue;
    candidates.push_back({"system", std::string("nccl.") + k.key, bundled, k.term, k.lower, k.upper});
  }
  std::vector<MeasuredTable> out;
  for (const NcclTestsTable& t : tables) {
    MeasuredTable m;
    m.file = t.file;
    m.heading = fmt::format("{}, {} ranks{}{}", t.op, t.ranks, t.algo.empty() ? "" : ", NCCL_ALGO=" + t.algo,
                            t.nccl_version.empty() ? "" : ", NCCL " + t.nccl_version);
    m.details = {{"file", t.file},           {"tool", "nccl-tests"},
                 {"op", t.op},               {"ranks", t.ranks},
                 {"gpus_per_domain", target.gpus_per_domain},
                 {"nccl_algo", t.algo},      {"nccl_version", t.nccl_version}};
    for (const NcclTestsRow& row : t.rows)
      m.rows.push_back({fmt::format("{:.0f}", row.size_bytes), row.size_bytes, row.line, row.time_us});
    m.candidates = candidates;
    m.price = [target, t](const json& overrides) { return price(target, t, overrides); };
    out.push_back(std::move(m));
  }
  return out;
}

Calibration fit_nccl_tables(const CalibrationTarget& target, const std::vector<NcclTestsTable>& tables) {
  return fit_tables(target.system, nccl_measured_tables(target, tables));
}

}  // namespace moesim::calibrate
