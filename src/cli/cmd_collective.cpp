// moesim collective: one collective or one EP dispatch/combine on a system, planned and simulated
// by the same platform code the training step uses, with its time and bandwidths counted the
// way the published microbenchmarks count them (nccl-tests, DeepEP, HybridEP), so each
// mechanism can be compared with them on its own.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"
#include "moesim/platform/simulate_plan.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

// The request (driver/collective_request.hpp) and what only the command line decides: where the
// configs are, whether and how to simulate, and how to print.
struct Options {
  driver::CollectiveRequest request;
  std::string configs;
  std::string fidelity = "folded";
  std::string format = "text";
  std::vector<std::string> calibrations;  // --calibration: the overlay of --system, if given
};

std::string tiers(const platform::Topology& t, const platform::TierLoad& l) {
  std::string out;
  auto rate = [](double r, double port) { return r > 0 && r < port ? r : port; };
  if (l.nvlink_steps > 0)
    out += fmt::format("NVLink {:.1f} MB at {:.1f} GB/s", l.nvlink_bytes / 1e6,
                       rate(l.nvlink_bytes_per_s, t.nvlink_bytes_per_s) / 1e9);
  if (l.nic_steps > 0) {
    out += fmt::format("{}NIC {:.1f} MB at {:.1f} GB/s", out.empty() ? "" : ", ", l.nic_bytes / 1e6,
                       rate(l.nic_bytes_per_s, t.nic_bytes_per_s) / 1e9);
    if (l.spine_bytes > 0)
      out += fmt::format(" ({:.1f} MB of it across the spine, at most {:.1f} GB/s)", l.spine_bytes / 1e6,
                         std::min(t.nic_bytes_per_s, t.spine_share_bytes_per_s()) / 1e9);
  }
  if (l.latency_s > 0) out += fmt::format(", + {:.1f} us latency", l.latency_s * 1e6);
  return out + "; bound by " + std::string(platform::bottleneck(t, l));
}

double simulated(const Options& o, const platform::Topology& t, const platform::Group& g,
                 const platform::TierLoad& load) {
  if (o.fidelity == "closed") return -1;
  return platform::simulate_plan_seconds(t, g, load,
                                         o.fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded);
}

// The request planned (with --calibration's overlay) and, when an overlay applies, planned on
// the bundled system too, for the before/after; an option it refuses is the command line's usage
// error (exit 2).
struct Planned {
  driver::PlannedCollective request;
  std::optional<driver::PlannedCollective> bundled;
};

Planned planned(const Options& o) {
  const auto dir = config::find_configs_dir(std::filesystem::current_path() / "collective", o.configs);
  driver::CollectiveRequest request = o.request;
  const auto overlays = read_calibrations(o.calibrations, dir);
  const config::CalibrationOverlay* overlay = config::overlay_for(request.system, overlays);
  require_calibrated(o.calibrations, overlay != nullptr, "--system " + request.system);
  if (overlay) {
    request.system_overrides = overlay->system_overrides;
    // --kernels names the dispatcher file; the overlay patches it if it calibrates that file.
    nlohmann::json own = nlohmann::json::object();
    if (!request.kernels.empty() && request.dispatcher != "alltoall")
      own[request.dispatcher] = request.kernels;
    request.stack_overrides = config::calibrated_stack_overrides(*overlay, request.stack, own, dir);
  }
  try {
    Planned p{driver::plan_collective_request(request, dir), std::nullopt};
    if (overlay) p.bundled = driver::plan_collective_request(o.request, dir);
    return p;
  } catch (const driver::CollectiveOptionError& e) {
    throw CLI::ValidationError(e.option(), e.what());
  }
}

// "; bundled 383.9 us (+7.3 %)": the calibration's effect on a closed-form time.
std::string bundled_note(const Planned& p, double calibrated_s, double bundled_s) {
  if (!p.bundled) return "";
  return fmt::format("; bundled system {:.1f} us, calibrated {:+.1f} %", bundled_s * 1e6,
                     (calibrated_s / bundled_s - 1) * 100);
}

std::string ep_exchange_text(const driver::CollectiveRequest& o, const driver::PlannedCollective& planned,
                             const std::string& placed, double secs, const std::string& timed_by) {
  const platform::EpExchangePlan& p = planned.exchange_plan;
  const platform::EpExchangeRequest& r = planned.exchange;
  const double nvl_bw = p.logical_nvlink_bytes / secs, rdma_bw = p.logical_rdma_bytes / secs;
  std::string text = fmt::format("{} with {} on {}: {}{}\n", o.op, o.dispatcher, planned.system.name, placed,
                                 p.two_hop ? " (RDMA to each destination domain, then NVLink forwarding)" : "");
  text += fmt::format("  routing: {} experts, top-{}, {} group{} (top {}): {:.3f} {} per token{}\n", o.experts, o.topk,
                      o.groups, o.groups == 1 ? "" : "s", r.routing.groups_per_token, p.copies_per_token,
                      r.dispatcher == platform::EpDispatcher::nccl_alltoall ? "copies (one per expert)" : "destination GPUs",
                      p.two_hop ? fmt::format(", {:.3f} destination domains", p.domains_per_token) : "");
  text += fmt::format("  per rank: {}\n", tiers(planned.topology, p.load));
  text += fmt::format("  time {:.1f} us ({})\n", secs * 1e6, timed_by);
  if (r.dispatcher == platform::EpDispatcher::nccl_alltoall)
    text += fmt::format("  nccl-tests all-to-all: algbw {:.1f} GB/s, busbw {:.1f} GB/s\n", nvl_bw / 1e9,
                        nvl_bw * (o.ranks - 1) / o.ranks / 1e9);
  else
    text += fmt::format("  bandwidth as DeepEP/HybridEP benchmarks count it: NVL {:.1f} GB/s (token copies received, "
                        "the own included){}\n",
                        nvl_bw / 1e9,
                        p.two_hop ? fmt::format(", RDMA {:.1f} GB/s ((token, domain) pairs, the own included)",
                                                rdma_bw / 1e9)
                                  : "");
  return text;
}

void run(const Options& options) {
  const driver::CollectiveRequest& o = options.request;
  const Planned planned_both = planned(options);
  const driver::PlannedCollective& planned_request = planned_both.request;
  const platform::Topology& t = planned_request.topology;
  const platform::Group& g = planned_request.group;
  const platform::GroupPlacement& where = planned_request.placement;
  const std::string placed = fmt::format("{} ranks in {} domain{} of {}", o.ranks, where.domains_spanned,
                                         where.domains_spanned == 1 ? "" : "s", where.max_ranks_per_domain);
  nlohmann::json rows = nlohmann::json::array();
  std::string text;

  if (o.ep_op()) {
    const platform::EpExchangePlan& p = planned_request.exchange_plan;
    const double sim = simulated(options, t, g, p.load);
    const double secs = sim >= 0 ? sim : p.seconds;
    const double nvl_bw = p.logical_nvlink_bytes / secs, rdma_bw = p.logical_rdma_bytes / secs;
    const double bundled_s = planned_both.bundled ? planned_both.bundled->exchange_plan.seconds : 0;
    text += ep_exchange_text(o, planned_request, placed, secs,
                             (sim >= 0 ? options.fidelity + " simulation" : "closed form") +
                                 bundled_note(planned_both, p.seconds, bundled_s));
    rows.push_back({{"op", o.op}, {"dispatcher", o.dispatcher}, {"ranks", o.ranks},
                    {"domains", where.domains_spanned}, {"seconds", secs}, {"closed_form_seconds", p.seconds},
                    {"copies_per_token", p.copies_per_token}, {"domains_per_token", p.domains_per_token},
                    {"nvlink_bytes", p.load.nvlink_bytes}, {"nic_bytes", p.load.nic_bytes},
                    {"nvl_gbytes_per_s", nvl_bw / 1e9}, {"rdma_gbytes_per_s", rdma_bw / 1e9}});
    if (planned_both.bundled) rows.back()["bundled_closed_form_seconds"] = bundled_s;
  } else {
    const platform::CollectiveKind kind = planned_request.kind;
    text += fmt::format("{} on {}: {}\n  {:>14}{:>10}{:>8}{:>5}{:>13}{:>12}{:>12}\n", o.op, planned_request.system.name,
                        placed, "size (B)", "algo", "proto", "ch", "time (us)", "algbw GB/s", "busbw GB/s");
    for (std::size_t i = 0; i < planned_request.plans.size(); ++i) {
      const double size = planned_request.sizes[i], bytes = planned_request.bytes[i];
      const platform::CollectivePlan& p = planned_request.plans[i];
      const double sim = simulated(options, t, g, p.load);
      const double secs = sim >= 0 ? sim : p.seconds;
      const double busbw = platform::bus_bytes_per_s(kind, o.ranks, bytes, secs);
      const double bundled_s = planned_both.bundled ? planned_both.bundled->plans[i].seconds : 0;
      const std::string note = bundled_note(planned_both, p.seconds, bundled_s);
      text += fmt::format("  {:>14.0f}{:>10}{:>8}{:>5}{:>13.1f}{:>12.2f}{:>12.2f}{}\n", size, to_string(p.algorithm),
                          to_string(p.protocol), p.channels, secs * 1e6, size / secs / 1e9, busbw / 1e9,
                          note.empty() ? "" : "  (" + note.substr(2) + ")");
      rows.push_back({{"op", o.op}, {"ranks", o.ranks}, {"domains", where.domains_spanned}, {"size", size},
                      {"algorithm", to_string(p.algorithm)}, {"protocol", to_string(p.protocol)},
                      {"channels", p.channels}, {"seconds", secs}, {"closed_form_seconds", p.seconds},
                      {"algbw_gbytes_per_s", size / secs / 1e9}, {"busbw_gbytes_per_s", busbw / 1e9}});
      if (planned_both.bundled) rows.back()["bundled_closed_form_seconds"] = bundled_s;
    }
  }
  emit(options.format == "json" ? rows.dump(2) + "\n" : text, "");
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "collective", "Plan and simulate one collective or EP dispatch/combine on a system; print its time and "
                    "bandwidths as nccl-tests, DeepEP and HybridEP count them");
  auto o = std::make_shared<Options>();
  cmd->add_option("--system", o->request.system, "system in configs/systems/")->capture_default_str();
  cmd->add_option("--stack", o->request.stack, "stack in configs/stacks/ (its dispatchers' measured rates)")
      ->capture_default_str();
  cmd->add_option("--configs", o->configs, "configs/ directory (default: found from the current directory)");
  add_calibration_option(cmd, o->calibrations);
  cmd->add_option("--op", o->request.op, "ep-dispatch, ep-combine (as the dispatchers' benchmarks run them: the dispatch with the router's probabilities, the combine without), all-reduce, all-gather, reduce-scatter, all-to-all, send-recv")
      ->check(CLI::IsMember(driver::collective_op_names()))
      ->capture_default_str();
  cmd->add_option("--ranks,--ep", o->request.ranks, "ranks of the group (GPUs 0..n-1), at least 2")
      ->check(CLI::Range(2, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--gpus-per-domain", o->request.gpus_per_domain, "GPUs used per NVLink domain (0: the whole domain)")
      ->check(CLI::Range(0, driver::kMaxCollectiveCount));
  cmd->add_option("--bytes", o->request.sizes,
                  "NCCL collectives: per-rank buffer sizes, comma-separated, K/M/G = powers of 1024 (nccl-tests' size), "
                  "each at most 1024G")
      ->capture_default_str();
  cmd->add_option("--algo", o->request.algo,
                  "NCCL collectives: force this algorithm, as NCCL_ALGO does (default: NCCL's choice)")
      ->check(CLI::IsMember(driver::forceable_algorithm_names()));
  cmd->add_flag("!--no-nvls", o->request.nvls,
                "NCCL collectives: NVLS and NVLS-tree off, as NCCL_NVLS_ENABLE=0 does (NCCL keeps to ring, tree and PAT)");
  cmd->add_option("--nccl-version", o->request.nccl_version,
                  "NCCL collectives: the NCCL release to model (MAJOR.MINOR[.PATCH]; default 2.28): how it cuts a small "
                  "NVLS all-reduce among its channels changed with 2.20, 2.22 and 2.23");
  cmd->add_option("--tokens", o->request.tokens, "EP: tokens per rank")
      ->check(CLI::Range(0, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--hidden", o->request.hidden, "EP: hidden size")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--experts", o->request.experts, "EP: routed experts")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--topk", o->request.topk, "EP: experts per token")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--groups", o->request.groups, "EP: router groups (n_group, a divisor of --experts; 1 = none)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_option("--topk-groups", o->request.topk_groups, "EP: groups per token (topk_group; 0 = all)")
      ->check(CLI::Range(0, driver::kMaxCollectiveCount));
  cmd->add_option("--dispatcher", o->request.dispatcher, "EP: alltoall, deepep, hybridep")
      ->check(CLI::IsMember(driver::ep_dispatcher_names()))
      ->capture_default_str();
  cmd->add_option("--kernels", o->request.kernels,
                  "EP: the dispatcher's measured kernels, a name in configs/dispatchers/ (e.g. deepep-v2; default: "
                  "the stack's); any file drives either dispatcher, a setting it leaves out never binds");
  cmd->add_option("--sms", o->request.sms, "EP: SMs of the dispatcher's kernels (1 to fewer than the GPU's)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount))
      ->capture_default_str();
  cmd->add_flag("--fp8,!--bf16", o->request.fp8, "EP: dispatch in FP8 (default) or BF16");
  cmd->add_option("--fidelity", o->fidelity, "closed (closed form only), folded or full simulation")
      ->check(CLI::IsMember({"closed", "folded", "full"}))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace moesim::cli
