// Folded fidelity: one host per representative rank, with its own NVLink port, NIC and a
// private spine share (nic / oversubscription: its part of the domain uplink when every GPU of
// the domain is busy), plus two mirror hosts reached over loop routes so that the representative
// can run a symmetric collective alone. A single FullZone holds it all: the number of
// representatives is small (one per role), so the explicit route table stays small too.
#include <stdexcept>

#include "links.hpp"
#include "moesim/platform/platform.hpp"

namespace moesim::platform {

using detail::down;
using detail::duplex;
using detail::up;

void Platform::build_folded(const std::vector<int>& ranks) {
  namespace sg4 = simgrid::s4u;
  const Topology& t = topology_;
  const auto size = static_cast<std::size_t>(t.gpus);
  hosts_.assign(size, nullptr);
  nvlink_mirror_.assign(size, nullptr);
  scaleout_mirror_.assign(size, nullptr);
  std::vector<bool> seen(size, false);
  for (int r : ranks) {
    if (r < 0 || r >= t.gpus)
      throw std::out_of_range("Platform::build: representative rank " + std::to_string(r) + " outside 0.." +
                              std::to_string(t.gpus - 1));
    if (seen[static_cast<std::size_t>(r)])
      throw std::invalid_argument("Platform::build: representative rank " + std::to_string(r) + " listed twice");
    seen[static_cast<std::size_t>(r)] = true;
  }

  auto* zone = sg4::create_full_zone("folded");
  struct Ports {
    sg4::SplitDuplexLink* nvl;
    sg4::SplitDuplexLink* nic;
    sg4::SplitDuplexLink* share;
  };
  std::vector<Ports> ports;
  ports.reserve(ranks.size());
  for (int r : ranks) {
    const auto i = static_cast<std::size_t>(r);
    const std::string name = detail::gpu_name(r);
    hosts_[i] = zone->create_host(name, t.gpu_flop_per_s);
    nvlink_mirror_[i] = zone->create_host(name + "-nvl-mirror", t.gpu_flop_per_s);
    scaleout_mirror_[i] = zone->create_host(name + "-net-mirror", t.gpu_flop_per_s);
    ports.push_back({duplex(zone, name + "-nvl", t.nvlink_bytes_per_s, t.nvlink_latency_s / 2),
                     duplex(zone, name + "-nic", t.nic_bytes_per_s, t.nic_latency_s),
                     duplex(zone, name + "-spine-share", t.spine_share_bytes_per_s(),
                            detail::uplink_latency_s(t.switch_latency_s))});
  }

  for (std::size_t a = 0; a < ranks.size(); ++a) {
    const int ra = ranks[a];
    const Ports& pa = ports[a];
    auto* ha = hosts_[static_cast<std::size_t>(ra)]->get_netpoint();
    auto* nvl_mirror = nvlink_mirror_[static_cast<std::size_t>(ra)]->get_netpoint();
    auto* net_mirror = scaleout_mirror_[static_cast<std::size_t>(ra)]->get_netpoint();
    // Loop routes: out of the port and back into it (UP and DOWN of one split-duplex link are
    // distinct constraints, so the loop loads each direction once, like sending to and
    // receiving from symmetric peers). Both directions, so either end may start the comm.
    const std::vector<sg4::LinkInRoute> nvl_loop = {up(pa.nvl), down(pa.nvl)};
    const std::vector<sg4::LinkInRoute> net_loop = {up(pa.nic), up(pa.share), down(pa.share), down(pa.nic)};
    zone->add_route(ha, nvl_mirror, nullptr, nullptr, nvl_loop, false);
    zone->add_route(nvl_mirror, ha, nullptr, nullptr, nvl_loop, false);
    zone->add_route(ha, net_mirror, nullptr, nullptr, net_loop, false);
    zone->add_route(net_mirror, ha, nullptr, nullptr, net_loop, false);

    // Representative to representative (e.g. pipeline-stage send/recv).
    for (std::size_t b = 0; b < ranks.size(); ++b) {
      if (a == b) continue;
      const int rb = ranks[b];
      const Ports& pb = ports[b];
      auto* hb = hosts_[static_cast<std::size_t>(rb)]->get_netpoint();
      if (t.domain_of(ra) == t.domain_of(rb))
        zone->add_route(ha, hb, nullptr, nullptr, {up(pa.nvl), down(pb.nvl)}, false);
      else
        zone->add_route(ha, hb, nullptr, nullptr, {up(pa.nic), up(pa.share), down(pb.share), down(pb.nic)}, false);
    }
  }
  zone->seal();
}

}  // namespace moesim::platform
