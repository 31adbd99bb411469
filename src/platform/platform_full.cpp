// Full fidelity: every GPU is a host. One FullZone per NVLink domain with explicit routes
// (a StarZone could not send inter-domain traffic through the NIC, notes §2.3), joined by a
// StarZone root whose per-domain uplink is SHARED by the domain's GPUs.
#include <algorithm>

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

  auto* root = sg4::create_star_zone("fabric");
  for (int d = 0; d < t.domains(); ++d) {
    const int first = d * t.gpus_per_domain;
    const int last = std::min(t.gpus, first + t.gpus_per_domain);  // the last domain may be partial
    const std::string dname = "domain-" + std::to_string(d);

    auto* zone = sg4::create_full_zone(dname);
    zone->set_parent(root);  // before any host or link (notes §5, pitfall 6)
    auto* gateway = zone->create_router(dname + "-gw");

    std::vector<sg4::SplitDuplexLink*> nvl;
    std::vector<sg4::SplitDuplexLink*> nic;
    for (int r = first; r < last; ++r) {
      const std::string name = detail::gpu_name(r);
      hosts_[static_cast<std::size_t>(r)] = zone->create_host(name, t.gpu_flop_per_s);
      nvl.push_back(duplex(zone, name + "-nvl", t.nvlink_bytes_per_s, t.nvlink_latency_s / 2));
      nic.push_back(duplex(zone, name + "-nic", t.nic_bytes_per_s, t.nic_latency_s));
    }
    const int n = last - first;
    for (int a = 0; a < n; ++a) {
      auto* ha = hosts_[static_cast<std::size_t>(first + a)]->get_netpoint();
      // Non-blocking NVSwitch: only the two GPU ports are constraints.
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        auto* hb = hosts_[static_cast<std::size_t>(first + b)]->get_netpoint();
        zone->add_route(ha, hb, nullptr, nullptr, {up(nvl[a]), down(nvl[b])}, false);
      }
      zone->add_route(ha, gateway, nullptr, nullptr, {up(nic[a])}, false);
      zone->add_route(gateway, ha, nullptr, nullptr, {down(nic[a])}, false);
    }
    zone->seal();

    const double uplink_bytes_per_s = n * t.spine_share_bytes_per_s();
    auto* uplink = duplex(root, dname + "-uplink", uplink_bytes_per_s,
                          detail::uplink_latency_s(t.switch_latency_s));
    // Symmetrical star route: UP leaving the domain, DOWN entering it.
    root->add_route(zone->get_netpoint(), nullptr, gateway, nullptr, {up(uplink)}, true);
  }
  root->seal();
}

}  // namespace moesim::platform
