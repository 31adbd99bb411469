// Checking and planning `moesim collective`'s request: each refusal names the option to change.
#include "moesim/driver/collective_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "moesim/config/loader.hpp"
#include "moesim/util/suffixed_number.hpp"

namespace moesim::driver {

namespace {

// nccl-tests sizes: a number with an optional K, M or G suffix (powers of 1024).
double parse_size(const std::string& text) {
  constexpr double kKi = 1024.0;
  const util::SuffixedNumber size = util::parse_suffixed_number(
      text, {{"K", kKi}, {"k", kKi}, {"M", kKi * kKi}, {"m", kKi * kKi}, {"G", kKi * kKi * kKi}, {"g", kKi * kKi * kKi}});
  if (size.status == util::SuffixedNumber::Status::not_a_number)
    throw CollectiveOptionError("--bytes", "a size in bytes, a number with an optional K, M or G suffix (powers of "
                                           "1024), e.g. 128M; got \"" + text + "\"");
  if (size.status == util::SuffixedNumber::Status::unknown_suffix)
    throw CollectiveOptionError("--bytes", "unknown size suffix in \"" + text + "\" (K, M, G)");
  const double v = size.value;
  if (!(v >= 0)) throw CollectiveOptionError("--bytes", "a size must be >= 0, got \"" + text + "\"");
  if (v > kMaxBufferBytes)
    throw CollectiveOptionError("--bytes", "a size of at most 1024G (1 TiB per rank, more than any GPU's memory), "
                                           "got \"" + text + "\"");
  return v;
}

// The routing options as the scenario schema checks n_group and topk_group (schema_model.cpp),
// and the EP group as the exchange needs it: each option's error names it.
void check_routing(const CollectiveRequest& o, const SystemSpec& system) {
  if (o.experts % o.ranks != 0)
    throw CollectiveOptionError("--ranks/--ep", fmt::format("a divisor of the {} experts (--experts): each EP rank "
                                                            "holds an equal share; got {}", o.experts, o.ranks));
  if (o.experts % o.groups != 0)
    throw CollectiveOptionError("--groups", fmt::format("a divisor of the {} experts (--experts): router groups split "
                                                        "them evenly; got {}", o.experts, o.groups));
  if (o.topk > o.experts)
    throw CollectiveOptionError("--topk", fmt::format("at most the {} experts (--experts); got {}", o.experts, o.topk));
  if (o.topk_groups > o.groups)
    throw CollectiveOptionError("--topk-groups", fmt::format("at most the {} router groups (--groups); got {}",
                                                             o.groups, o.topk_groups));
  if (o.topk_groups > 0 && o.topk > o.topk_groups * (o.experts / o.groups))
    throw CollectiveOptionError("--topk-groups", fmt::format("groups enough for the top-{} experts ({} groups of {} "
                                                             "experts each); got {}", o.topk, o.groups,
                                                             o.experts / o.groups, o.topk_groups));
  if (o.sms >= system.gpu.sm_count)
    throw CollectiveOptionError("--sms", fmt::format("fewer than the {} SMs of {}'s GPU; got {}", system.gpu.sm_count,
                                                     system.name, o.sms));
}

platform::CollectiveKind collective_kind(const std::string& op) {
  if (op == "all-reduce") return platform::CollectiveKind::all_reduce;
  if (op == "all-gather") return platform::CollectiveKind::all_gather;
  if (op == "reduce-scatter") return platform::CollectiveKind::reduce_scatter;
  if (op == "all-to-all") return platform::CollectiveKind::all_to_all;
  return platform::CollectiveKind::send_recv;
}

// The plan; an algorithm forced by --algo that cannot run this collective is the option's error.
platform::CollectivePlan forced_plan(const CollectiveRequest& o, const platform::Topology& t,
                                     platform::CollectiveKind kind, const platform::Group& g, double bytes) {
  try {
    return platform::plan_collective(t, kind, g, bytes, 0);
  } catch (const std::invalid_argument& e) {
    if (o.algo.empty()) throw;
    throw CollectiveOptionError("--algo", e.what());
  }
}

void check_range(const char* option, int value, int min) {
  if (value < min || value > kMaxCollectiveCount)
    throw CollectiveOptionError(option, fmt::format("an integer from {} to {}; got {}", min, kMaxCollectiveCount, value));
}

void check_member(const char* option, const std::string& value, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
    throw CollectiveOptionError(option, fmt::format("one of {}; got \"{}\"", fmt::join(allowed, ", "), value));
}

void plan_ep_exchange(const CollectiveRequest& o, const std::filesystem::path& configs_dir, PlannedCollective& p) {
  StackSpec stack = config::load_stack_with(o.stack, configs_dir, o.stack_overrides);
  const char* slot = o.dispatcher == "hybridep" ? "hybridep" : "deepep";
  if (!o.kernels.empty() && !o.stack_overrides.contains(slot))  // (a calibrated slot names its file already)
    (o.dispatcher == "hybridep" ? stack.hybridep : stack.deepep) = config::load_dispatcher(o.kernels, configs_dir);
  RecipeSpec recipe;
  recipe.dispatcher = o.dispatcher;
  recipe.dispatcher_sms = o.sms;
  const platform::EpKernel kernel = o.op == "ep-dispatch" ? platform::EpKernel::dispatch : platform::EpKernel::combine;
  // FP8 dispatch: one byte per element and one FP32 scale per 128 (DeepEP) or one byte per 32
  // (MXFP8): 1.03125 bytes per element either way. The combine is BF16.
  const double token_bytes = o.hidden * (kernel == platform::EpKernel::dispatch && o.fp8 ? 1.03125 : 2.0);
  p.exchange = platform::one_exchange(platform::ep_exchange_request(recipe, stack, ModelSpec{}), kernel, o.tokens,
                                      token_bytes, kernel == platform::EpKernel::dispatch);  // as the benchmarks run them
  p.exchange.hidden = o.hidden;
  p.exchange.routing = {o.experts, o.topk, o.groups, o.topk_groups > 0 ? o.topk_groups : o.groups};
  // Ranks split unevenly over domains: the busiest member's plan (the exchange ends with it).
  p.exchange_plan = platform::plan_ep_exchange_folded(p.topology, p.group, p.exchange, 0);
}

void plan_nccl_collective(const CollectiveRequest& o, PlannedCollective& p) {
  p.kind = collective_kind(o.op);
  if (p.kind == platform::CollectiveKind::send_recv && o.ranks != 2)
    throw CollectiveOptionError("--ranks", "send-recv runs between 2 ranks");
  p.sizes = parse_buffer_sizes(o.sizes);
  for (double size : p.sizes) {
    // nccl-tests' size is the per-rank buffer; an all-to-all sends size / n to each peer.
    p.bytes.push_back(p.kind == platform::CollectiveKind::all_to_all ? size / o.ranks : size);
    p.plans.push_back(forced_plan(o, p.topology, p.kind, p.group, p.bytes.back()));
  }
}

}  // namespace

const std::vector<std::string>& collective_op_names() {
  static const std::vector<std::string> names = {"ep-dispatch",    "ep-combine", "all-reduce", "all-gather",
                                                 "reduce-scatter", "all-to-all", "send-recv"};
  return names;
}

const std::vector<std::string>& ep_dispatcher_names() {
  static const std::vector<std::string> names = {"alltoall", "deepep", "hybridep"};
  return names;
}

std::vector<std::string> forceable_algorithm_names() {
  std::vector<std::string> names;
  for (platform::NcclAlgorithm a : platform::kForceableNcclAlgorithms) names.emplace_back(platform::to_string(a));
  return names;
}

void check_option_values(const CollectiveRequest& r) {
  check_member("--op", r.op, collective_op_names());
  check_member("--dispatcher", r.dispatcher, ep_dispatcher_names());
  if (!r.algo.empty()) check_member("--algo", r.algo, forceable_algorithm_names());
  check_range("--ranks", r.ranks, 2);  // one rank moves nothing: its bandwidth would be inf or NaN
  check_range("--gpus-per-domain", r.gpus_per_domain, 0);
  check_range("--tokens", r.tokens, 0);
  check_range("--hidden", r.hidden, 1);
  check_range("--experts", r.experts, 1);
  check_range("--topk", r.topk, 1);
  check_range("--groups", r.groups, 1);
  check_range("--topk-groups", r.topk_groups, 0);
  check_range("--sms", r.sms, 1);
}

std::vector<double> parse_buffer_sizes(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(parse_size(item));
  if (out.empty()) throw CollectiveOptionError("--bytes", "at least one size, e.g. 128M or 1M,16M; got \"" + list + "\"");
  return out;
}

int parse_nccl_version(const std::string& text) {
  std::smatch m;
  if (!std::regex_match(text, m, std::regex(R"(2\.(\d{1,2})(\.\d+)?)")))
    throw CollectiveOptionError("--nccl-version", "expected NCCL 2.x as MAJOR.MINOR[.PATCH], e.g. 2.18.5; got \"" +
                                                      text + "\"");
  return 200 + std::stoi(m[1].str());
}

PlannedCollective plan_collective_request(const CollectiveRequest& o, const std::filesystem::path& configs_dir) {
  check_option_values(o);
  PlannedCollective p;
  p.system = config::load_system_with(o.system, configs_dir, o.system_overrides);
  const SystemSpec& system = p.system;
  const bool ep_op = o.ep_op();
  if (ep_op && !o.algo.empty()) throw CollectiveOptionError("--algo", "applies to NCCL collectives, not to " + o.op);
  if (ep_op && !o.nvls) throw CollectiveOptionError("--no-nvls", "applies to NCCL collectives, not to " + o.op);
  if (ep_op && !o.nccl_version.empty())
    throw CollectiveOptionError("--nccl-version", "applies to NCCL collectives, not to " + o.op);
  if (!o.kernels.empty() && (!ep_op || o.dispatcher == "alltoall"))
    throw CollectiveOptionError("--kernels", "applies to ep-dispatch and ep-combine with deepep or hybridep");
  if (o.ranks < 2 || o.ranks > system.max_gpus)
    throw CollectiveOptionError("--ranks", fmt::format("2..{} GPUs on {}", system.max_gpus, system.name));
  if (ep_op) check_routing(o, system);
  if (o.gpus_per_domain > system.domain_gpus)
    throw CollectiveOptionError("--gpus-per-domain", fmt::format("at most the {} GPUs of an NVLink domain of {}; got {}",
                                                                 system.domain_gpus, system.name, o.gpus_per_domain));
  p.topology = platform::make_topology(system, o.ranks, o.gpus_per_domain, o.fp8 ? Precision::fp8 : Precision::bf16);
  if (!o.nvls) p.topology.nccl.nvls = false;
  if (!o.nccl_version.empty()) p.topology.nccl.version = parse_nccl_version(o.nccl_version);
  if (!o.algo.empty()) {
    if (!p.topology.nccl.modelled)
      throw CollectiveOptionError("--algo",
                                  fmt::format("{} has no NCCL model (nccl) to force an algorithm of", system.name));
    p.topology.nccl.forced_algorithm = platform::nccl_algorithm_named(o.algo);
  }
  for (int r = 0; r < o.ranks; ++r) p.group.ranks.push_back(r);
  p.placement = platform::placement(p.topology, p.group);
  if (ep_op) plan_ep_exchange(o, configs_dir, p);
  else plan_nccl_collective(o, p);
  return p;
}

}  // namespace moesim::driver
