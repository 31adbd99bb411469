// Closed forms of the collectives (collective.hpp) and the placement summary for `moesim plan`.
#include <algorithm>
#include <stdexcept>

#include "collective_load.hpp"

namespace moesim::platform {

using detail::GroupLayout;

std::string_view to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::send_recv: return "send_recv";
  }
  return "?";
}

double tier_seconds(const Topology& t, const TierLoad& load) {
  const double nvl = detail::nvlink_seconds(t, load);
  const double nic = detail::nic_seconds(t, load);
  const double tiers = load.tiers_sequential ? nvl + nic : std::max(nvl, nic);
  return tiers > 0 ? tiers + load.latency_s : (load.nvlink_steps > 0 || load.nic_steps > 0 ? load.latency_s : 0.0);
}

namespace {

std::string_view scaleout_tier(const Topology& t) {
  return t.spine_share_bytes_per_s() < t.nic_bytes_per_s ? "spine" : "nic";
}

// The NIC tier is bound by the uplink share when its spine part takes longer than the NIC.
std::string_view nic_tier(const Topology& t, const TierLoad& l) {
  return l.spine_bytes / detail::spine_rate(t) > l.nic_bytes / detail::nic_rate(t, l) ? "spine" : "nic";
}

}  // namespace

TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes) {
  return plan_collective(t, kind, g, bytes).load;
}

TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes, int rank) {
  return plan_collective(t, kind, g, bytes, rank).load;
}

double closed_form_seconds(const Topology& t, CollectiveKind kind, const Group& g, double bytes) {
  return plan_collective(t, kind, g, bytes).seconds;
}

std::string_view bottleneck(const Topology& t, const TierLoad& load) {
  const double nvl = detail::nvlink_seconds(t, load);
  const double nic = detail::nic_seconds(t, load);
  if (nvl <= 0 && nic <= 0) return "none";
  return nic > nvl ? nic_tier(t, load) : "nvlink";
}

std::string_view bottleneck(const Topology& t, CollectiveKind kind, const Group& g, double bytes) {
  return bottleneck(t, tier_load(t, kind, g, bytes));
}

double all_to_all_v_seconds(const Topology& t, const Group& g, const std::vector<double>& bytes_matrix) {
  const GroupLayout l = detail::analyse_group(t, g);
  const auto n = static_cast<std::size_t>(l.size);
  if (bytes_matrix.size() != n * n)
    throw std::invalid_argument("all_to_all_v_seconds: expected a " + std::to_string(n) + " x " +
                                std::to_string(n) + " byte matrix, got " + std::to_string(bytes_matrix.size()) +
                                " entries");
  double worst_s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double nvl_out = 0, nvl_in = 0, nic_out = 0, nic_in = 0, spine_out = 0, spine_in = 0;
    const int leaf_i = l.domain_leaf_group[static_cast<std::size_t>(l.domain_index[i])];
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const bool same_domain = l.domain_index[i] == l.domain_index[j];
      const bool other_leaf = l.domain_leaf_group[static_cast<std::size_t>(l.domain_index[j])] != leaf_i;
      (same_domain ? nvl_out : nic_out) += bytes_matrix[i * n + j];
      (same_domain ? nvl_in : nic_in) += bytes_matrix[j * n + i];
      if (other_leaf) {
        spine_out += bytes_matrix[i * n + j];
        spine_in += bytes_matrix[j * n + i];
      }
    }
    TierLoad out, in;  // each direction of the member's ports on its own
    out.nvlink_bytes = nvl_out;
    in.nvlink_bytes = nvl_in;
    out.nic_bytes = nic_out;
    in.nic_bytes = nic_in;
    for (TierLoad* d : {&out, &in}) {
      d->nvlink_steps = d->nvlink_bytes > 0 ? 1 : 0;
      d->nic_steps = d->nic_bytes > 0 ? 1 : 0;
    }
    out.spine_bytes = spine_out;
    in.spine_bytes = spine_in;
    out.crosses_spine = in.crosses_spine = spine_out > 0 || spine_in > 0;
    for (const TierLoad* d : {&out, &in})
      worst_s = std::max({worst_s, detail::nvlink_seconds(t, *d), detail::nic_seconds(t, *d)});
  }
  return worst_s;
}

GroupPlacement placement(const Topology& t, const Group& g) {
  const GroupLayout l = detail::analyse_group(t, g);
  GroupPlacement p;
  p.size = l.size;
  p.domains_spanned = l.domains;
  p.min_ranks_per_domain = l.min_per_domain;
  p.max_ranks_per_domain = l.max_per_domain;
  p.bottleneck_tier = l.size <= 1 ? "none" : l.domains == 1 ? "nvlink" : l.leaf_groups > 1 ? scaleout_tier(t) : "nic";
  return p;
}

}  // namespace moesim::platform
