#include "moesim/platform/ep_dispatch.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

// `share`: the part of the kernel-only bandwidth the call reaches; every rate slows by it, so the
// exchange takes 1/share of its kernel time whichever limit binds.
EpKernelRates kernel_rates(const EpKernelSpec& k, double share) {
  return {k.nvlink_efficiency * share, k.sm_bytes_per_s * share, k.rdma_efficiency * share,
          k.sm_copy_seconds_per_peer / share, k.forward_sm_bytes_per_s * share};
}

}  // namespace

EpExchangeRequest ep_exchange_request(const RecipeSpec& recipe, const StackSpec& stack, const ModelSpec& model) {
  EpExchangeRequest r;
  r.dispatcher = ep_dispatcher(recipe.dispatcher);
  r.routing = model::routing_shape(model);
  r.hidden = model.hidden;
  r.sms = recipe.dispatcher_sms;
  const EpDispatcherSpec& rates = r.dispatcher == EpDispatcher::hybridep ? stack.hybridep : stack.deepep;
  // Megatron-Core 0.15 to 0.17 call HybridEP through its blocking Python API (routing-map
  // all-gather, preprocessing, a host sync, buffer copies), which the library's own "Torch API"
  // benchmark measures; 0.18 calls the kernels without a sync.
  const bool api = r.dispatcher == EpDispatcher::hybridep && stack.hybridep_call == "torch_api";
  r.rates = {kernel_rates(rates.dispatch, api ? rates.dispatch.torch_api_share : 1.0),
             kernel_rates(rates.combine, api ? rates.combine.torch_api_share : 1.0)};
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

// A group split unevenly over NVLink domains (an EP64 group on 72-GPU racks: 56 + 8, or 8 + 56):
// domain u holds members[u] x E/ep experts and a token hits it with the hypergeometric chance of
// uniform top-k (model::probability_unit_hit; the group limit is ignored, as distinct_units does
// where units and groups do not nest). A member sends one RDMA copy per other domain its token
// hits, and receives its share of the copies the other domains' members send to its own domain,
// which for the members of a small domain is more than they send; its NIC is busy for the larger
// of the two directions. Which part of that leaves the leaf group: the hit domains' (sending) or
// the senders' (receiving).
struct UnevenDomains {
  double domains_per_token = 0;  // distinct destination domains, the own one included
  double nic_per_token = 0;      // RDMA copies per routed token through the member's NIC, busier direction
  double spine_fraction = 0;
};

UnevenDomains uneven_domains(const detail::GroupLayout& l, const model::RoutingShape& r, int member) {
  UnevenDomains out;
  const int own = l.domain_index[static_cast<std::size_t>(member)];
  const int own_members = l.domain_members_count[static_cast<std::size_t>(own)];
  double sent = 0, sent_spine = 0, own_hit = 0;
  for (int u = 0; u < l.domains; ++u) {
    const double p = model::probability_unit_hit(r, r.experts / l.size * l.domain_members_count[static_cast<std::size_t>(u)]);
    out.domains_per_token += p;
    if (u == own) {
      own_hit = p;
      continue;
    }
    sent += p;
    if (l.domain_leaf_group[static_cast<std::size_t>(u)] != l.domain_leaf_group[static_cast<std::size_t>(own)]) sent_spine += p;
  }
  // Senders are the members of the other domains, each as likely to hit this domain; they spread
  // their copies for it over its members (the same local index, modulo its size).
  const double received = own_hit * (l.size - own_members) / own_members;
  out.nic_per_token = std::max(sent, received);
  out.spine_fraction = sent >= received ? (sent > 0 ? sent_spine / sent : 0.0) : l.spine_fraction_of_peers(member);
  return out;
}

// Where it carries them, HybridEP sends each token copy with an FP32 probability row over the
// experts of one NVLink domain, NUM_OF_EXPERTS_PER_RANK x NUM_OF_RANKS_PER_NODE (HEP:
// hybrid_ep_backend.cuh, the load thread's probability copy, the store threads' copy of it to each
// destination, the RDMA write of it to each node); DeepEP's and NCCL's routing metadata is left
// out (under 2 % of a token). NUM_OF_RANKS_PER_NODE is one constant of the kernel: where the
// group's domains hold unequal numbers of members, the largest (its buffers fit every domain).
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
    // k: the members of the own domain; every domain's when they are equal.
    const int k = l.members_in_domain_of(member);
    const int d = l.domains;
    const bool uneven = l.min_per_domain != l.max_per_domain;
    const EpKernelRates& rates = r.kernel == EpKernel::dispatch ? r.rates.dispatch : r.rates.combine;
    plan.copies_per_token = distinct_units(r.routing, n, 1);
    UnevenDomains split;
    if (uneven) {
      split = uneven_domains(l, r.routing, member);
      plan.domains_per_token = split.domains_per_token;
    } else {
      plan.domains_per_token = distinct_units(r.routing, n, k);
    }
    plan.two_hop = d > 1;
    TierLoad& load = plan.load;
    // A copy stays on the GPU when the destination (inside the domain) or the forwarder (across
    // domains) is the sender itself: 1/k of the (token, GPU) pairs by symmetry. With unequal
    // domains too, k the own domain's members: the domain receives k/n of the copies of all n
    // members' tokens and its k members forward them, 1/k of them to themselves.
    const double wire_bytes = r.token_bytes + routing_bytes_per_copy(r, n, l.max_per_domain);
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
      if (uneven) load.nic_bytes = r.tokens * split.nic_per_token * wire_bytes;
      else load.nic_bytes = r.tokens * plan.domains_per_token * (d - 1) / d * wire_bytes;
      load.nic_steps = 1;
      load.nic_bytes_per_s = detail::port_nic_rate(t) * rates.rdma_efficiency;
      // Equal destination domains are alike: those in other leaf groups climb to the spine.
      detail::split_spine(load, uneven ? split.spine_fraction : l.spine_fraction_of_domains(member));
    }
    plan.logical_nvlink_bytes = r.tokens * plan.copies_per_token * r.token_bytes;
    plan.logical_rdma_bytes = d > 1 ? r.tokens * plan.domains_per_token * r.token_bytes : 0;
  }
  plan.seconds = tier_seconds(t, plan.load);
  return plan;
}

EpExchangePlan plan_ep_exchange_folded(const Topology& t, const Group& g, const EpExchangeRequest& r, int rank) {
  const detail::GroupLayout l = detail::analyse_group(t, g);
  if (l.min_per_domain == l.max_per_domain) return plan_ep_exchange(t, g, r, rank);
  (void)l.member(rank);  // throws for a rank outside the group, as plan_ep_exchange does
  // Members of one domain share its size and leaf group, so one per domain stands for them all.
  EpExchangePlan busiest;
  bool first = true;
  for (const std::vector<int>& members : l.domain_members) {
    EpExchangePlan p = plan_ep_exchange(t, g, r, l.ranks[static_cast<std::size_t>(members.front())]);
    if (first || p.seconds > busiest.seconds) busiest = std::move(p);
    first = false;
  }
  return busiest;
}

}  // namespace moesim::platform
