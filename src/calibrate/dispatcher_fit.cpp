// DeepEP and HybridEP outputs as tables of the shared fit (moesim/calibrate/dispatcher_fit.hpp).
#include "moesim/calibrate/dispatcher_fit.hpp"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::calibrate {

namespace {

using nlohmann::json;

// The stack the exchanges are priced with: the dispatcher file comes from --kernels, and only
// HybridEP's call (kernel or Torch API) depends on a release, set per row.
constexpr const char* kPricingStack = "megatron-bridge-26.06";

struct KernelKey {
  const char* key;  // under the kernel ("dispatch.<key>")
  double EpKernelSpec::*field;
  double json_per_si;   // the schema's unit: GB/s for rates, ns for per-copy times
  double lower, upper;  // the schema's range
};

// The keys a kernel's own time moves (DeepEP's tests and HybridEP's kernel lines). 0 bundled = "never
// binds" or "not modelled": another mechanism, never fitted from there.
constexpr KernelKey kKernelKeys[] = {
    {"nvlink_efficiency", &EpKernelSpec::nvlink_efficiency, 1, 0.01, 1},
    {"sm_gbytes_per_s", &EpKernelSpec::sm_bytes_per_s, 1e-9, 0.01, 1e4},
    {"sm_copy_ns_per_peer", &EpKernelSpec::sm_copy_seconds_per_peer, 1e9, 0.01, 1e4},
    {"forward_sm_gbytes_per_s", &EpKernelSpec::forward_sm_bytes_per_s, 1e-9, 0.01, 1e4},
    {"rdma_efficiency", &EpKernelSpec::rdma_efficiency, 1, 0.01, 1},
};
// HybridEP's Torch API lines move the call's share alone: the kernel is fitted on the kernel lines.
constexpr KernelKey kApiKey = {"torch_api_share", &EpKernelSpec::torch_api_share, 1, 0.01, 1};

struct Priced {
  Pricing pricing;
  std::vector<double> nvl_bytes;  // DeepEP's NVL count of each row, as moesim plans it
};

Priced price(const CalibrationTarget& target, const DispatcherTestsOutput& o, const std::vector<DispatcherRun>& runs,
             const std::string& file, int default_sms, const json& overrides) {
  Priced p;
  for (const DispatcherRun& run : runs) {
    driver::CollectiveRequest r;
    r.system = target.system;
    r.gpus_per_domain = target.gpus_per_domain;
    r.stack = kPricingStack;
    r.op = "ep-" + run.kernel;
    r.dispatcher = o.tool;
    r.kernels = file;
    r.ranks = o.ranks;
    r.tokens = o.tokens;
    r.hidden = o.hidden;
    r.experts = o.experts;
    r.topk = o.topk;
    r.groups = o.groups;
    r.topk_groups = o.topk_groups;
    r.sms = run.sms > 0 ? run.sms : default_sms;
    r.fp8 = run.kernel == "dispatch" && run.fp8;  // a combine is BF16
    r.system_overrides = overrides.value("system", json::object());
    if (const auto layer = overrides.find("dispatchers"); layer != overrides.end() && layer->contains(file)) {
      json slot = (*layer)[file];
      slot["base"] = file;
      r.stack_overrides[o.tool] = slot;
    }
    if (run.torch_api) r.stack_overrides["hybridep_call"] = "torch_api";
    try {
      const driver::PlannedCollective planned = driver::plan_collective_request(r, target.configs_dir);
      p.pricing.seconds.push_back(planned.exchange_plan.seconds);
      p.pricing.notes.emplace_back();  // which limit binds (link, SMs, forwarding) the plan does not say
      p.nvl_bytes.push_back(planned.exchange_plan.logical_nvlink_bytes);
    } catch (const driver::CollectiveOptionError& e) {
      throw ConfigError(o.file, fmt::format("line {}", run.line),
                        fmt::format("an exchange moesim can price on {} ({}: {})", target.system, e.option(), e.what()));
    }
  }
  return p;
}

Candidate candidate(const std::string& layer, const std::string& kernel, const KernelKey& k, const EpKernelSpec& spec) {
  return {layer, kernel + "." + k.key, spec.*k.field * k.json_per_si, Term::bandwidth, k.lower, k.upper};
}

}  // namespace

std::vector<MeasuredTable> dispatcher_measured_tables(const CalibrationTarget& target,
                                                      const std::vector<DispatcherTestsOutput>& outputs,
                                                      const std::string& kernels) {
  const SystemSpec system = config::load_system(target.system, target.configs_dir);
  const int per_domain = target.gpus_per_domain > 0 ? target.gpus_per_domain : system.domain_gpus;
  std::vector<MeasuredTable> out;
  for (const DispatcherTestsOutput& o : outputs) {
    const std::string file = kernels.empty() ? o.tool : kernels;
    const EpDispatcherSpec bundled = config::load_dispatcher(file, target.configs_dir);
    const int default_sms = o.ranks <= per_domain ? 24 : 8;  // HybridEP's default (config.cuh); DeepEP prints its own
    // One table per kernel and kind of line: the keys a dispatch moves are not a combine's.
    std::map<std::pair<std::string, bool>, std::vector<DispatcherRun>> groups;
    for (const DispatcherRun& run : o.runs) groups[{run.kernel, run.torch_api}].push_back(run);
    for (const auto& group : groups) {
      const std::string& kernel = group.first.first;
      const bool api = group.first.second;
      const std::vector<DispatcherRun>& runs = group.second;  // a variable a lambda can capture
      const EpKernelSpec& spec = kernel == "dispatch" ? bundled.dispatch : bundled.combine;
      MeasuredTable m;
      m.file = o.file;
      m.heading = fmt::format("{} {}{}, {} ranks, {} tokens x {}, top-{} of {} experts", o.tool, kernel,
                              api ? " (Torch API)" : "", o.ranks, o.tokens, o.hidden, o.topk, o.experts);
      m.what_column = "kernel";
      m.note_column = "";
      m.rows_differ_in_kind = true;
      m.details = {{"file", o.file}, {"tool", o.tool == "deepep" ? "DeepEP tests" : "HybridEP tests"},
                   {"dispatcher", file}, {"op", "ep-" + kernel}, {"torch_api", api}, {"ranks", o.ranks},
                   {"gpus_per_domain", target.gpus_per_domain}, {"tokens", o.tokens}, {"hidden", o.hidden},
                   {"topk", o.topk}, {"experts", o.experts}};
      const std::string layer = "dispatchers." + file;
      if (api) {
        if (spec.torch_api_share > 0) m.candidates.push_back(candidate(layer, kernel, kApiKey, spec));
      } else {
        for (const KernelKey& k : kKernelKeys)
          if (spec.*k.field > 0) m.candidates.push_back(candidate(layer, kernel, k, spec));
      }
      const Priced bundled_price = price(target, o, runs, file, default_sms, json::object());
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const DispatcherRun& run = runs[i];
        // Older DeepEP tests print the bandwidth alone: the time is DeepEP's byte count over it.
        const double us = run.time_us > 0 ? run.time_us : bundled_price.nvl_bytes[i] / (run.nvl_gbytes_per_s * 1e3);
        const double token_bytes = o.hidden * (kernel == "dispatch" && run.fp8 ? 1.03125 : 2.0);
        m.rows.push_back({run.what(), o.tokens * token_bytes, run.line, us});
      }
      m.price = [target, o, runs, file, default_sms](const json& overrides) {
        return price(target, o, runs, file, default_sms, overrides).pricing;
      };
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace moesim::calibrate
