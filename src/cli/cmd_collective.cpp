// moesim collective: one collective or one EP dispatch/combine on a system, planned and simulated
// by the same platform code the training step uses, with its time and bandwidths counted the
// way the published microbenchmarks count them (nccl-tests, DeepEP, HybridEP), so each
// mechanism can be compared with them on its own.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/nccl.hpp"
#include "moesim/platform/simulate_plan.hpp"

namespace moesim::cli {

namespace {

struct Options {
  std::string system = "gb300-nvl72";
  std::string stack = "megatron-bridge-26.06";
  std::string configs;
  std::string op = "ep-dispatch";
  int ranks = 32;
  int gpus_per_domain = 0;
  std::string sizes = "128M";
  int tokens = 4096;
  int hidden = 7168;
  int experts = 256;
  int topk = 8;
  int groups = 1;
  int topk_groups = 0;
  std::string algo;  // NCCL_ALGO; empty: NCCL's choice
  bool nvls = true;  // NCCL_NVLS_ENABLE
  std::string nccl_version;  // empty: the version the configs' sources read
  std::string dispatcher = "deepep";
  std::string kernels;  // a file of configs/dispatchers/; empty: the stack's for the dispatcher
  int sms = 24;
  bool fp8 = true;
  std::string fidelity = "folded";
  std::string format = "text";
};

// Integer options: at most 2^24, the scenario schema's bound on counts and sizes (CLI11's
// PositiveNumber would print a 309-digit upper bound).
constexpr int kMaxCount = 1 << 24;
// A per-rank buffer beyond 1 TiB is larger than any GPU's memory; near 2^63 bytes the byte
// counts lose their integer meaning and the bandwidths became absurd (issue 42).
constexpr double kMaxBufferBytes = 1024.0 * 1024 * 1024 * 1024;

// nccl-tests sizes: a number with an optional K, M or G suffix (powers of 1024).
double parse_size(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::logic_error&) {  // std::invalid_argument ("abc"), std::out_of_range ("1e999")
    throw CLI::ValidationError("--bytes", "a size in bytes, a number with an optional K, M or G suffix (powers of "
                                          "1024), e.g. 128M; got \"" + text + "\"");
  }
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") v *= 1024.0;
  else if (suffix == "M" || suffix == "m") v *= 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") v *= 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) throw CLI::ValidationError("--bytes", "unknown size suffix in \"" + text + "\" (K, M, G)");
  if (!(v >= 0)) throw CLI::ValidationError("--bytes", "a size must be >= 0, got \"" + text + "\"");
  if (v > kMaxBufferBytes)
    throw CLI::ValidationError("--bytes", "a size of at most 1024G (1 TiB per rank, more than any GPU's memory), got \"" +
                                              text + "\"");
  return v;
}

std::vector<double> parse_sizes(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(parse_size(item));
  if (out.empty()) throw CLI::ValidationError("--bytes", "at least one size, e.g. 128M or 1M,16M; got \"" + list + "\"");
  return out;
}

// The routing options as the scenario schema checks n_group and topk_group (schema_model.cpp),
// and the EP group as the exchange needs it: each option's error names it.
void check_routing(const Options& o, const SystemSpec& system) {
  if (o.experts % o.ranks != 0)
    throw CLI::ValidationError("--ranks/--ep", fmt::format("a divisor of the {} experts (--experts): each EP rank holds "
                                                           "an equal share; got {}", o.experts, o.ranks));
  if (o.experts % o.groups != 0)
    throw CLI::ValidationError("--groups", fmt::format("a divisor of the {} experts (--experts): router groups split "
                                                       "them evenly; got {}", o.experts, o.groups));
  if (o.topk > o.experts)
    throw CLI::ValidationError("--topk", fmt::format("at most the {} experts (--experts); got {}", o.experts, o.topk));
  if (o.topk_groups > o.groups)
    throw CLI::ValidationError("--topk-groups", fmt::format("at most the {} router groups (--groups); got {}", o.groups,
                                                            o.topk_groups));
  if (o.topk_groups > 0 && o.topk > o.topk_groups * (o.experts / o.groups))
    throw CLI::ValidationError("--topk-groups", fmt::format("groups enough for the top-{} experts ({} groups of {} "
                                                            "experts each); got {}", o.topk, o.groups,
                                                            o.experts / o.groups, o.topk_groups));
  if (o.sms >= system.gpu.sm_count)
    throw CLI::ValidationError("--sms", fmt::format("fewer than the {} SMs of {}'s GPU; got {}", system.gpu.sm_count,
                                                    system.name, o.sms));
}

platform::CollectiveKind collective_kind(const std::string& op) {
  if (op == "all-reduce") return platform::CollectiveKind::all_reduce;
  if (op == "all-gather") return platform::CollectiveKind::all_gather;
  if (op == "reduce-scatter") return platform::CollectiveKind::reduce_scatter;
  if (op == "all-to-all") return platform::CollectiveKind::all_to_all;
  return platform::CollectiveKind::send_recv;
}

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

// The plan; an algorithm forced by --algo that cannot run this collective is the option's error.
platform::CollectivePlan forced_plan(const Options& o, const platform::Topology& t, platform::CollectiveKind kind,
                                     const platform::Group& g, double bytes) {
  try {
    return platform::plan_collective(t, kind, g, bytes, 0);
  } catch (const std::invalid_argument& e) {
    if (o.algo.empty()) throw;
    throw CLI::ValidationError("--algo", e.what());
  }
}

// "2.18" or "2.18.5" as NcclParams::version (major x 100 + minor).
int parse_nccl_version(const std::string& text) {
  std::smatch m;
  if (!std::regex_match(text, m, std::regex(R"(2\.(\d{1,2})(\.\d+)?)")))
    throw CLI::ValidationError("--nccl-version", "expected NCCL 2.x as MAJOR.MINOR[.PATCH], e.g. 2.18.5; got \"" +
                                                     text + "\"");
  return 200 + std::stoi(m[1].str());
}

void run(const Options& o) {
  const auto dir = config::find_configs_dir(std::filesystem::current_path() / "collective", o.configs);
  const SystemSpec system = config::load_system(o.system, dir);
  const bool ep_op = o.op == "ep-dispatch" || o.op == "ep-combine";
  if (ep_op && !o.algo.empty()) throw CLI::ValidationError("--algo", "applies to NCCL collectives, not to " + o.op);
  if (ep_op && !o.nvls) throw CLI::ValidationError("--no-nvls", "applies to NCCL collectives, not to " + o.op);
  if (ep_op && !o.nccl_version.empty())
    throw CLI::ValidationError("--nccl-version", "applies to NCCL collectives, not to " + o.op);
  if (!o.kernels.empty() && (!ep_op || o.dispatcher == "alltoall"))
    throw CLI::ValidationError("--kernels", "applies to ep-dispatch and ep-combine with deepep or hybridep");
  if (o.ranks < 1 || o.ranks > system.max_gpus)
    throw CLI::ValidationError("--ranks", fmt::format("1..{} GPUs on {}", system.max_gpus, system.name));
  if (ep_op) check_routing(o, system);
  if (o.gpus_per_domain > system.domain_gpus)
    throw CLI::ValidationError("--gpus-per-domain", fmt::format("at most the {} GPUs of an NVLink domain of {}; got {}",
                                                                system.domain_gpus, system.name, o.gpus_per_domain));
  platform::Topology t = platform::make_topology(system, o.ranks, o.gpus_per_domain,
                                                 o.fp8 ? Precision::fp8 : Precision::bf16);
  if (!o.nvls) t.nccl.nvls = false;
  if (!o.nccl_version.empty()) {
    t.nccl.version = parse_nccl_version(o.nccl_version);
  }
  if (!o.algo.empty()) {
    if (!t.nccl.modelled)
      throw CLI::ValidationError("--algo", fmt::format("{} has no NCCL model (nccl) to force an algorithm of", system.name));
    t.nccl.forced_algorithm = platform::nccl_algorithm_named(o.algo);
  }
  platform::Group g;
  for (int r = 0; r < o.ranks; ++r) g.ranks.push_back(r);
  const platform::GroupPlacement where = platform::placement(t, g);
  const std::string placed = fmt::format("{} ranks in {} domain{} of {}", o.ranks, where.domains_spanned,
                                         where.domains_spanned == 1 ? "" : "s", where.max_ranks_per_domain);
  nlohmann::json rows = nlohmann::json::array();
  std::string text;

  if (ep_op) {
    StackSpec stack = config::load_stack(o.stack, dir);
    if (!o.kernels.empty())
      (o.dispatcher == "hybridep" ? stack.hybridep : stack.deepep) = config::load_dispatcher(o.kernels, dir);
    RecipeSpec recipe;
    recipe.dispatcher = o.dispatcher;
    recipe.dispatcher_sms = o.sms;
    const platform::EpKernel kernel = o.op == "ep-dispatch" ? platform::EpKernel::dispatch : platform::EpKernel::combine;
    // FP8 dispatch: one byte per element and one FP32 scale per 128 (DeepEP) or one byte per 32
    // (MXFP8): 1.03125 bytes per element either way. The combine is BF16.
    const double token_bytes = o.hidden * (kernel == platform::EpKernel::dispatch && o.fp8 ? 1.03125 : 2.0);
    platform::EpExchangeRequest r =
        platform::one_exchange(platform::ep_exchange_request(recipe, stack, ModelSpec{}), kernel, o.tokens, token_bytes,
                               kernel == platform::EpKernel::dispatch);  // as the dispatchers' benchmarks run them
    r.hidden = o.hidden;
    r.routing = {o.experts, o.topk, o.groups, o.topk_groups > 0 ? o.topk_groups : o.groups};
    // Ranks split unevenly over domains: the busiest member's plan (the exchange ends with it).
    const platform::EpExchangePlan p = platform::plan_ep_exchange_folded(t, g, r, 0);
    const double sim = simulated(o, t, g, p.load);
    const double secs = sim >= 0 ? sim : p.seconds;
    const double nvl_bw = p.logical_nvlink_bytes / secs, rdma_bw = p.logical_rdma_bytes / secs;
    text += fmt::format("{} with {} on {}: {}{}\n", o.op, o.dispatcher, system.name, placed,
                        p.two_hop ? " (RDMA to each destination domain, then NVLink forwarding)" : "");
    text += fmt::format("  routing: {} experts, top-{}, {} group{} (top {}): {:.3f} {} per token{}\n", o.experts, o.topk,
                        o.groups, o.groups == 1 ? "" : "s", r.routing.groups_per_token, p.copies_per_token,
                        r.dispatcher == platform::EpDispatcher::nccl_alltoall ? "copies (one per expert)" : "destination GPUs",
                        p.two_hop ? fmt::format(", {:.3f} destination domains", p.domains_per_token) : "");
    text += fmt::format("  per rank: {}\n", tiers(t, p.load));
    text += fmt::format("  time {:.1f} us ({})\n", secs * 1e6, sim >= 0 ? o.fidelity + " simulation" : "closed form");
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
    rows.push_back({{"op", o.op}, {"dispatcher", o.dispatcher}, {"ranks", o.ranks},
                    {"domains", where.domains_spanned}, {"seconds", secs}, {"closed_form_seconds", p.seconds},
                    {"copies_per_token", p.copies_per_token}, {"domains_per_token", p.domains_per_token},
                    {"nvlink_bytes", p.load.nvlink_bytes}, {"nic_bytes", p.load.nic_bytes},
                    {"nvl_gbytes_per_s", nvl_bw / 1e9}, {"rdma_gbytes_per_s", rdma_bw / 1e9}});
  } else {
    const platform::CollectiveKind kind = collective_kind(o.op);
    if (kind == platform::CollectiveKind::send_recv && o.ranks != 2)
      throw CLI::ValidationError("--ranks", "send-recv runs between 2 ranks");
    text += fmt::format("{} on {}: {}\n  {:>14}{:>10}{:>8}{:>5}{:>13}{:>12}{:>12}\n", o.op, system.name, placed,
                        "size (B)", "algo", "proto", "ch", "time (us)", "algbw GB/s", "busbw GB/s");
    for (double size : parse_sizes(o.sizes)) {
      // nccl-tests' size is the per-rank buffer; an all-to-all sends size / n to each peer.
      const double bytes = kind == platform::CollectiveKind::all_to_all ? size / o.ranks : size;
      const platform::CollectivePlan p = forced_plan(o, t, kind, g, bytes);
      const double sim = simulated(o, t, g, p.load);
      const double secs = sim >= 0 ? sim : p.seconds;
      const double busbw = platform::bus_bytes_per_s(kind, o.ranks, bytes, secs);
      text += fmt::format("  {:>14.0f}{:>10}{:>8}{:>5}{:>13.1f}{:>12.2f}{:>12.2f}\n", size, to_string(p.algorithm),
                          to_string(p.protocol), p.channels, secs * 1e6, size / secs / 1e9, busbw / 1e9);
      rows.push_back({{"op", o.op}, {"ranks", o.ranks}, {"domains", where.domains_spanned}, {"size", size},
                      {"algorithm", to_string(p.algorithm)}, {"protocol", to_string(p.protocol)},
                      {"channels", p.channels}, {"seconds", secs}, {"closed_form_seconds", p.seconds},
                      {"algbw_gbytes_per_s", size / secs / 1e9}, {"busbw_gbytes_per_s", busbw / 1e9}});
    }
  }
  emit(o.format == "json" ? rows.dump(2) + "\n" : text, "");
}

std::vector<std::string> forceable_algorithm_names() {
  std::vector<std::string> names;
  for (platform::NcclAlgorithm a : platform::kForceableNcclAlgorithms) names.emplace_back(platform::to_string(a));
  return names;
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "collective", "Plan and simulate one collective or EP dispatch/combine on a system; print its time and "
                    "bandwidths as nccl-tests, DeepEP and HybridEP count them");
  auto o = std::make_shared<Options>();
  cmd->add_option("--system", o->system, "system in configs/systems/")->capture_default_str();
  cmd->add_option("--stack", o->stack, "stack in configs/stacks/ (its dispatchers' measured rates)")
      ->capture_default_str();
  cmd->add_option("--configs", o->configs, "configs/ directory (default: found from the current directory)");
  cmd->add_option("--op", o->op, "ep-dispatch, ep-combine (as the dispatchers' benchmarks run them: the dispatch with the router's probabilities, the combine without), all-reduce, all-gather, reduce-scatter, all-to-all, send-recv")
      ->check(CLI::IsMember({"ep-dispatch", "ep-combine", "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                             "send-recv"}))
      ->capture_default_str();
  cmd->add_option("--ranks,--ep", o->ranks, "ranks of the group (GPUs 0..n-1)")->check(CLI::Range(1, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--gpus-per-domain", o->gpus_per_domain, "GPUs used per NVLink domain (0: the whole domain)")
      ->check(CLI::Range(0, kMaxCount));
  cmd->add_option("--bytes", o->sizes,
                  "NCCL collectives: per-rank buffer sizes, comma-separated, K/M/G = powers of 1024 (nccl-tests' size), "
                  "each at most 1024G")
      ->capture_default_str();
  cmd->add_option("--algo", o->algo, "NCCL collectives: force this algorithm, as NCCL_ALGO does (default: NCCL's choice)")
      ->check(CLI::IsMember(forceable_algorithm_names()));
  cmd->add_flag("!--no-nvls", o->nvls,
                "NCCL collectives: NVLS and NVLS-tree off, as NCCL_NVLS_ENABLE=0 does (NCCL keeps to ring, tree and PAT)");
  cmd->add_option("--nccl-version", o->nccl_version,
                  "NCCL collectives: the NCCL release to model (MAJOR.MINOR[.PATCH]; default 2.28): how it cuts a small "
                  "NVLS all-reduce among its channels changed with 2.20, 2.22 and 2.23");
  cmd->add_option("--tokens", o->tokens, "EP: tokens per rank")->check(CLI::Range(0, kMaxCount))->capture_default_str();
  cmd->add_option("--hidden", o->hidden, "EP: hidden size")->check(CLI::Range(1, kMaxCount))->capture_default_str();
  cmd->add_option("--experts", o->experts, "EP: routed experts")->check(CLI::Range(1, kMaxCount))->capture_default_str();
  cmd->add_option("--topk", o->topk, "EP: experts per token")->check(CLI::Range(1, kMaxCount))->capture_default_str();
  cmd->add_option("--groups", o->groups, "EP: router groups (n_group, a divisor of --experts; 1 = none)")
      ->check(CLI::Range(1, kMaxCount))
      ->capture_default_str();
  cmd->add_option("--topk-groups", o->topk_groups, "EP: groups per token (topk_group; 0 = all)")
      ->check(CLI::Range(0, kMaxCount));
  cmd->add_option("--dispatcher", o->dispatcher, "EP: alltoall, deepep, hybridep")
      ->check(CLI::IsMember({"alltoall", "deepep", "hybridep"}))
      ->capture_default_str();
  cmd->add_option("--kernels", o->kernels,
                  "EP: the dispatcher's measured kernels, a name in configs/dispatchers/ (e.g. deepep-v2; default: "
                  "the stack's); any file drives either dispatcher, a setting it leaves out never binds");
  cmd->add_option("--sms", o->sms, "EP: SMs of the dispatcher's kernels (1 to fewer than the GPU's)")
      ->check(CLI::Range(1, kMaxCount))
      ->capture_default_str();
  cmd->add_flag("--fp8,!--bf16", o->fp8, "EP: dispatch in FP8 (default) or BF16");
  cmd->add_option("--fidelity", o->fidelity, "closed (closed form only), folded or full simulation")
      ->check(CLI::IsMember({"closed", "folded", "full"}))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace moesim::cli
