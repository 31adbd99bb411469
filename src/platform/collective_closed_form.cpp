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

std::string_view scaleout_tier(const Topology& t) { return t.oversubscription > 1.0 ? "spine" : "nic"; }

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
  return nic > nvl ? scaleout_tier(t) : "nvlink";
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
    double nvl_out = 0, nvl_in = 0, nic_out = 0, nic_in = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const bool same_domain = l.domain_index[i] == l.domain_index[j];
      (same_domain ? nvl_out : nic_out) += bytes_matrix[i * n + j];
      (same_domain ? nvl_in : nic_in) += bytes_matrix[j * n + i];
    }
    const double nvl_bytes = std::max(nvl_out, nvl_in);
    const double nic_bytes = std::max(nic_out, nic_in);
    const double nvl_s = detail::tier_part_seconds(nvl_bytes, nvl_bytes > 0 ? 1 : 0, detail::port_nvlink_rate(t),
                                                   t.nvlink_latency_s);
    const double nic_s = detail::tier_part_seconds(nic_bytes, nic_bytes > 0 ? 1 : 0, detail::port_nic_rate(t),
                                                   t.scaleout_latency_s());
    worst_s = std::max({worst_s, nvl_s, nic_s});
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
  p.bottleneck_tier = l.size <= 1 ? "none" : l.domains == 1 ? "nvlink" : scaleout_tier(t);
  return p;
}

}  // namespace moesim::platform
