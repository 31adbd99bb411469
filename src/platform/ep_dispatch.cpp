#include "moesim/platform/ep_dispatch.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "collective_load.hpp"

namespace moesim::platform {

EpDispatcher ep_dispatcher(std::string_view name) {
  if (name == "alltoall") return EpDispatcher::nccl_alltoall;
  if (name == "deepep") return EpDispatcher::deepep;
  if (name == "hybridep") return EpDispatcher::hybridep;
  throw std::invalid_argument("unknown EP dispatcher \"" + std::string(name) + "\" (alltoall, deepep, hybridep)");
}

std::string_view to_string(EpDispatcher d) {
  switch (d) {
    case EpDispatcher::nccl_alltoall: return "alltoall";
    case EpDispatcher::deepep: return "deepep";
    case EpDispatcher::hybridep: return "hybridep";
  }
  return "?";
}

namespace {

EpKernelRates kernel_rates(const EpKernelSpec& k) {
  return {k.nvlink_efficiency, k.sm_bytes_per_s, k.rdma_efficiency, k.sm_copy_seconds_per_peer,
          k.forward_sm_bytes_per_s};
}

}  // namespace

EpExchangeRequest ep_exchange_request(const RecipeSpec& recipe, const StackSpec& stack, const ModelSpec& model) {
  EpExchangeRequest r;
  r.dispatcher = ep_dispatcher(recipe.dispatcher);
  r.routing = model::routing_shape(model);
  r.hidden = model.hidden;
  r.sms = recipe.dispatcher_sms;
  const EpDispatcherSpec& rates = r.dispatcher == EpDispatcher::hybridep ? stack.hybridep : stack.deepep;
  r.rates = {kernel_rates(rates.dispatch), kernel_rates(rates.combine)};
  return r;
}

EpExchangeRequest one_exchange(EpExchangeRequest shared, EpKernel kernel, double tokens, double token_bytes,
                               bool probabilities) {
  shared.kernel = kernel;
  shared.probabilities = probabilities;
  shared.tokens = tokens;
  shared.token_bytes = token_bytes;
  return shared;
}

namespace {

// Distinct units per token; where the units and the router's groups do not nest, the group
// limit is ignored (uniform top-k), which overstates the copies slightly.
double distinct_units(const model::RoutingShape& r, int ep, int ranks_per_unit) {
  if (ranks_per_unit >= ep) return r.top_k > 0 ? 1.0 : 0.0;
  const int experts_per_unit = r.experts / ep * ranks_per_unit;
  try {
    return model::expected_distinct_units(r, experts_per_unit);
  } catch (const std::invalid_argument&) {
    model::RoutingShape uniform = r;
    uniform.groups = uniform.groups_per_token = 1;
    return model::expected_distinct_units(uniform, experts_per_unit);
  }
}

// Where it carries them, HybridEP sends each token copy with an FP32 probability row over the
// experts of one NVLink domain, NUM_OF_EXPERTS_PER_RANK x NUM_OF_RANKS_PER_NODE (HEP:
// hybrid_ep_backend.cuh, the load thread's probability copy, the store threads' copy of it to each
// destination, the RDMA write of it to each node); DeepEP's and NCCL's routing metadata is left
// out (under 2 % of a token).
double routing_bytes_per_copy(const EpExchangeRequest& r, int ep, int domain_members) {
  if (r.dispatcher != EpDispatcher::hybridep || !r.probabilities) return 0.0;
  return 4.0 * r.routing.experts / ep * domain_members;
}

// SM time of an exchange whose kernel pays a fixed time per copy it issues, per member of its
// NVLink domain, the ranks its copies go to (itself included, as the constant was derived). HEP:
// the dispatch's store threads issue a TMA copy of the token and, where carried, its probabilities
// and, in FP8, its scales to each destination after the load thread fetched them once: copies + 1
// rounds of 1 to 3; the combine loads each copy's token (and probabilities) and stores their sum:
// copies (twice) + 1. 0 when the kernel has no such cost.
double sm_seconds(const EpExchangeRequest& r, const EpKernelRates& rates, double copies_per_token, int domain_members) {
  if (rates.sm_copy_seconds_per_peer <= 0 || r.sms <= 0) return 0;
  const bool scaled = r.hidden > 0 && r.token_bytes < 2.0 * r.hidden;  // FP8: under 2 bytes per element
  const double per_copy = 1.0 + (r.probabilities ? 1 : 0) + (r.kernel == EpKernel::dispatch && scaled ? 1 : 0);
  const double copies = r.kernel == EpKernel::dispatch ? per_copy * (copies_per_token + 1)
                                                       : per_copy * copies_per_token + 1;
  return r.tokens / r.sms * copies * rates.sm_copy_seconds_per_peer * domain_members;
}

EpExchangePlan nccl_plan(const Topology& t, const Group& g, const detail::GroupLayout& l, const EpExchangeRequest& r,
                         int rank) {
  EpExchangePlan plan;
  const double n = l.size;
  plan.copies_per_token = r.routing.top_k;
  plan.domains_per_token = 0;
  const double per_peer = r.tokens * r.routing.top_k / n * r.token_bytes;
  const CollectivePlan c = plan_collective(t, CollectiveKind::all_to_all, g, per_peer, rank);
  plan.load = c.load;
  plan.channels = c.channels;
  plan.logical_nvlink_bytes = r.tokens * r.routing.top_k * r.token_bytes;
  return plan;
}

}  // namespace

EpExchangePlan plan_ep_exchange(const Topology& t, const Group& g, const EpExchangeRequest& r, int rank) {
  if (r.tokens < 0 || r.token_bytes < 0) throw std::invalid_argument("EP exchange: negative tokens or token bytes");
  const detail::GroupLayout l = detail::analyse_group(t, g);
  const int member = l.member(rank);
  const int n = l.size;
  if (r.routing.experts <= 0 || r.routing.experts % n != 0)
    throw std::invalid_argument("EP exchange: " + std::to_string(r.routing.experts) + " experts do not divide over " +
                                std::to_string(n) + " ranks");
  EpExchangePlan plan;
  if (n > 1 && r.dispatcher == EpDispatcher::nccl_alltoall) {
    plan = nccl_plan(t, g, l, r, rank);
  } else if (n > 1) {
    const int k = l.members_in_domain_of(member);
    const int d = l.domains;
    const EpKernelRates& rates = r.kernel == EpKernel::dispatch ? r.rates.dispatch : r.rates.combine;
    plan.copies_per_token = distinct_units(r.routing, n, 1);
    plan.domains_per_token = distinct_units(r.routing, n, k);
    plan.two_hop = d > 1;
    TierLoad& load = plan.load;
    // A copy stays on the GPU when the destination (inside the domain) or the forwarder (across
    // domains) is the sender itself: 1/k of the (token, GPU) pairs by symmetry.
    const double wire_bytes = r.token_bytes + routing_bytes_per_copy(r, n, k);
    load.nvlink_bytes = r.tokens * plan.copies_per_token * (k - 1) / k * wire_bytes;
    load.nvlink_steps = k > 1 ? 1 : 0;
    double nvlink_rate = t.nvlink_bytes_per_s * rates.nvlink_efficiency;
    // The per-copy law is measured inside one NVLink domain; across domains the kernel is another
    // (RDMA senders and NVLink forwarders), and its SMs bind per byte where a rate is given.
    // Inside a domain the per-copy law replaces the per-byte rate rather than adding to it: both
    // model the same SMs' limit (HybridEP's two are fitted to one measurement, 32 ranks on 16
    // SMs), so binding both would count that limit twice (docs/scenarios.md says so).
    const double sm_s = d == 1 ? sm_seconds(r, rates, plan.copies_per_token, k) : 0;
    if (sm_s > 0 && load.nvlink_bytes > 0) nvlink_rate = std::min(nvlink_rate, load.nvlink_bytes / sm_s);
    else if (rates.sm_bytes_per_s > 0 && r.sms > 0) nvlink_rate = std::min(nvlink_rate, r.sms * rates.sm_bytes_per_s);
    // Across domains the NVLink leg is the forwarders' (DeepEP: 12 warps per destination GPU, one
    // token at a time), bound below the link by their own rate where one is measured.
    if (d > 1 && rates.forward_sm_bytes_per_s > 0 && r.sms > 0)
      nvlink_rate = std::min(nvlink_rate, r.sms * rates.forward_sm_bytes_per_s);
    load.nvlink_bytes_per_s = nvlink_rate;
    if (d > 1) {
      load.nic_bytes = r.tokens * plan.domains_per_token * (d - 1) / d * wire_bytes;
      load.nic_steps = 1;
      load.nic_bytes_per_s = detail::port_nic_rate(t) * rates.rdma_efficiency;
      // Destination domains are alike: those in other leaf groups climb to the spine.
      detail::split_spine(load, l.spine_fraction_of_domains(member));
    }
    plan.logical_nvlink_bytes = r.tokens * plan.copies_per_token * r.token_bytes;
    plan.logical_rdma_bytes = d > 1 ? r.tokens * plan.domains_per_token * r.token_bytes : 0;
  }
  plan.seconds = tier_seconds(t, plan.load);
  return plan;
}

}  // namespace moesim::platform
