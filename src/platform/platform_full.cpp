// Full fidelity: every GPU is a host. One FullZone per NVLink domain with explicit routes
// (a StarZone could not send inter-domain traffic through the NIC, notes §2.3) and two gateways:
// one under the leaves (traffic to domains of its leaf group: the GPU's NIC, then the leaf
// switch) and one towards the spine (the GPU's NIC, then the uplinks of its rail's leaf, SHARED
// by the GPUs of that leaf). A FullZone root routes each pair of domains through the leaf switch
// of their leaf group or through the spine.
#include <algorithm>
#include <vector>

#include "links.hpp"
#include "moesim/platform/platform.hpp"

namespace moesim::platform {

using detail::down;
using detail::duplex;
using detail::up;

void Platform::build_full() {
  namespace sg4 = simgrid::s4u;
  const Topology& t = topology_;
  hosts_.assign(static_cast<std::size_t>(t.gpus), nullptr);
  nvlink_ports_.assign(static_cast<std::size_t>(t.gpus), nullptr);

  auto* root = sg4::create_full_zone("fabric");
  // Switch crossings: latency, never a bottleneck (their ports are the links around them). A
  // leaf switch carries the latency of three hops, like the path through the spine
  // (Topology::scaleout_latency_s()).
  auto* spine = duplex(root, "spine", detail::kUnboundedBytesPerS, t.switch_latency_s);
  std::vector<sg4::SplitDuplexLink*> leaf_switch;
  // Uplinks of the leaf of (leaf group g, rail r), at [g * gpus_per_domain + r].
  std::vector<sg4::SplitDuplexLink*> uplink;
  for (int g = 0; g < t.leaf_groups(); ++g) {
    leaf_switch.push_back(
        duplex(root, "leaf-group-" + std::to_string(g), detail::kUnboundedBytesPerS, 3 * t.switch_latency_s));
    for (int r = 0; r < t.gpus_per_domain; ++r)
      uplink.push_back(duplex(root, "leaf-" + std::to_string(g) + "-rail-" + std::to_string(r) + "-uplink",
                              t.leaf_uplink_bytes_per_s() * t.uplink_speed_of(g), t.switch_latency_s));
  }

  struct Domain {
    sg4::NetZone* zone;
    simgrid::kernel::routing::NetPoint* to_leaf;
    simgrid::kernel::routing::NetPoint* to_spine;
  };
  // The ranks on each domain's GPUs, in rail order (the scenario's placement; the last domain may
  // be partial).
  std::vector<std::vector<int>> ranks_in_domain(static_cast<std::size_t>(t.domains()));
  for (int r = 0; r < t.gpus; ++r) ranks_in_domain[static_cast<std::size_t>(t.domain_of(r))].push_back(r);
  for (auto& ranks : ranks_in_domain)
    std::sort(ranks.begin(), ranks.end(), [&](int a, int b) { return t.rail_of(a) < t.rail_of(b); });

  std::vector<Domain> domains;
  for (int d = 0; d < t.domains(); ++d) {
    const std::vector<int>& ranks = ranks_in_domain[static_cast<std::size_t>(d)];
    const std::string dname = "domain-" + std::to_string(d);
    const int g = t.leaf_group_of_domain(d);

    auto* zone = sg4::create_full_zone(dname);
    zone->set_parent(root);  // before any host or link (notes §5, pitfall 6)
    auto* to_leaf = zone->create_router(dname + "-leaf");
    auto* to_spine = zone->create_router(dname + "-spine");

    std::vector<sg4::SplitDuplexLink*> nvl;
    std::vector<sg4::SplitDuplexLink*> nic;
    for (int r : ranks) {
      const std::string name = detail::gpu_name(r);
      hosts_[static_cast<std::size_t>(r)] = zone->create_host(name, t.gpu_flop_per_s);
      nvlink_ports_[static_cast<std::size_t>(r)] = zone->create_host(name + "-nvl-port", t.nvlink_bytes_per_s);
      nvl.push_back(duplex(zone, name + "-nvl", t.nvlink_bytes_per_s, t.nvlink_latency_s / 2));
      nic.push_back(duplex(zone, name + "-nic", t.nic_bytes_per_s * t.nic_speed_of(r), t.nic_latency_s));
    }
    const auto n = ranks.size();
    for (std::size_t a = 0; a < n; ++a) {
      auto* ha = hosts_[static_cast<std::size_t>(ranks[a])]->get_netpoint();
      // Non-blocking NVSwitch: only the two GPU ports are constraints.
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        auto* hb = hosts_[static_cast<std::size_t>(ranks[b])]->get_netpoint();
        zone->add_route(ha, hb, nullptr, nullptr, {up(nvl[a]), down(nvl[b])}, false);
      }
      auto* rail_uplink = uplink[static_cast<std::size_t>(g * t.gpus_per_domain + t.rail_of(ranks[a]))];
      zone->add_route(ha, to_leaf, nullptr, nullptr, {up(nic[a])}, false);
      zone->add_route(to_leaf, ha, nullptr, nullptr, {down(nic[a])}, false);
      zone->add_route(ha, to_spine, nullptr, nullptr, {up(nic[a]), up(rail_uplink)}, false);
      zone->add_route(to_spine, ha, nullptr, nullptr, {down(rail_uplink), down(nic[a])}, false);
    }
    zone->seal();
    domains.push_back({zone, to_leaf, to_spine});
  }

  for (int a = 0; a < t.domains(); ++a)
    for (int b = 0; b < t.domains(); ++b) {
      if (a == b) continue;
      const Domain& da = domains[static_cast<std::size_t>(a)];
      const Domain& db = domains[static_cast<std::size_t>(b)];
      const int g = t.leaf_group_of_domain(a);
      if (g == t.leaf_group_of_domain(b))
        root->add_route(da.zone->get_netpoint(), db.zone->get_netpoint(), da.to_leaf, db.to_leaf,
                        {up(leaf_switch[static_cast<std::size_t>(g)])}, false);
      else
        root->add_route(da.zone->get_netpoint(), db.zone->get_netpoint(), da.to_spine, db.to_spine, {up(spine)}, false);
    }
  root->seal();
}

}  // namespace moesim::platform
