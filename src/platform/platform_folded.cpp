// Folded fidelity: one host per representative rank, with its own NVLink port and NIC, plus
// mirror hosts reached over loop routes so that the representative can run a symmetric
// collective alone: over NVLink, through its NIC under its leaf, and through its NIC, its leaf's
// uplinks and the spine. A leaf's uplinks are shared by every GPU of its rail in its leaf group;
// the representatives on one leaf share one link holding the part of those uplinks their
// symmetric peers leave them: capacity / M, M = the leaf's GPUs per representative on it (each
// representative stands for M GPUs of its role there). Exact when every role on a leaf has its
// representative on it with the same count, as in symmetric layouts; then a representative's
// EP, DP and PP flows compete there with each other and with the other roles' as in the full
// platform. A single FullZone holds it all: the representatives are few (one per role), so the
// explicit route table stays small.
#include <map>
#include <stdexcept>
#include <utility>

#include "links.hpp"
#include "moesim/platform/platform.hpp"

namespace moesim::platform {

using detail::down;
using detail::duplex;
using detail::up;

namespace {

// GPUs of the topology on the leaf of (leaf group, rail).
int gpus_on_leaf(const Topology& t, int leaf_group, int rail) {
  int n = 0;
  const int first = leaf_group * t.domains_per_leaf;
  for (int d = first; d < first + t.domains_per_leaf && d < t.domains(); ++d)
    n += d * t.gpus_per_domain + rail < t.gpus ? 1 : 0;
  return n;
}

}  // namespace

void Platform::build_folded(const std::vector<int>& ranks) {
  namespace sg4 = simgrid::s4u;
  const Topology& t = topology_;
  const auto size = static_cast<std::size_t>(t.gpus);
  hosts_.assign(size, nullptr);
  nvlink_mirror_.assign(size, nullptr);
  leaf_mirror_.assign(size, nullptr);
  scaleout_mirror_.assign(size, nullptr);
  std::vector<bool> seen(size, false);
  std::map<std::pair<int, int>, int> reps_on_leaf;  // (leaf group, rail) -> representatives there
  for (int r : ranks) {
    if (r < 0 || r >= t.gpus)
      throw std::out_of_range("Platform::build: representative rank " + std::to_string(r) + " outside 0.." +
                              std::to_string(t.gpus - 1));
    if (seen[static_cast<std::size_t>(r)])
      throw std::invalid_argument("Platform::build: representative rank " + std::to_string(r) + " listed twice");
    seen[static_cast<std::size_t>(r)] = true;
    ++reps_on_leaf[{t.leaf_group_of_domain(t.domain_of(r)), t.rail_of(r)}];
  }

  auto* zone = sg4::create_full_zone("folded");
  // One uplink share per leaf that holds representatives.
  std::map<std::pair<int, int>, sg4::SplitDuplexLink*> shares;
  for (const auto& [leaf, reps] : reps_on_leaf) {
    const double gpus_per_rep = static_cast<double>(gpus_on_leaf(t, leaf.first, leaf.second)) / reps;
    shares[leaf] = duplex(zone, "leaf-" + std::to_string(leaf.first) + "-rail-" + std::to_string(leaf.second) + "-share",
                          t.leaf_uplink_bytes_per_s() / gpus_per_rep, detail::uplink_latency_s(t.switch_latency_s));
  }
  struct Ports {
    sg4::SplitDuplexLink* nvl;
    sg4::SplitDuplexLink* nic;
    sg4::SplitDuplexLink* leaf_hop;  // crossing the leaf: latency only (three hops, as the spine path)
    sg4::SplitDuplexLink* share;
  };
  std::vector<Ports> ports;
  ports.reserve(ranks.size());
  for (int r : ranks) {
    const auto i = static_cast<std::size_t>(r);
    const std::string name = detail::gpu_name(r);
    hosts_[i] = zone->create_host(name, t.gpu_flop_per_s);
    nvlink_mirror_[i] = zone->create_host(name + "-nvl-mirror", t.gpu_flop_per_s);
    leaf_mirror_[i] = zone->create_host(name + "-leaf-mirror", t.gpu_flop_per_s);
    scaleout_mirror_[i] = zone->create_host(name + "-net-mirror", t.gpu_flop_per_s);
    ports.push_back({duplex(zone, name + "-nvl", t.nvlink_bytes_per_s, t.nvlink_latency_s / 2),
                     duplex(zone, name + "-nic", t.nic_bytes_per_s, t.nic_latency_s),
                     duplex(zone, name + "-leaf", detail::kUnboundedBytesPerS, 3 * t.switch_latency_s),
                     shares.at({t.leaf_group_of_domain(t.domain_of(r)), t.rail_of(r)})});
  }

  for (std::size_t a = 0; a < ranks.size(); ++a) {
    const int ra = ranks[a];
    const Ports& pa = ports[a];
    auto* ha = hosts_[static_cast<std::size_t>(ra)]->get_netpoint();
    // Loop routes: out of the port and back into it (UP and DOWN of one split-duplex link are
    // distinct constraints, so the loop loads each direction once, like sending to and
    // receiving from symmetric peers). Both directions, so either end may start the comm.
    const std::vector<sg4::LinkInRoute> nvl_loop = {up(pa.nvl), down(pa.nvl)};
    const std::vector<sg4::LinkInRoute> leaf_loop = {up(pa.nic), up(pa.leaf_hop), down(pa.nic)};
    const std::vector<sg4::LinkInRoute> net_loop = {up(pa.nic), up(pa.share), down(pa.share), down(pa.nic)};
    const std::pair<sg4::Host*, const std::vector<sg4::LinkInRoute>*> loops[] = {
        {nvlink_mirror_[static_cast<std::size_t>(ra)], &nvl_loop},
        {leaf_mirror_[static_cast<std::size_t>(ra)], &leaf_loop},
        {scaleout_mirror_[static_cast<std::size_t>(ra)], &net_loop}};
    for (const auto& [mirror, route] : loops) {
      zone->add_route(ha, mirror->get_netpoint(), nullptr, nullptr, *route, false);
      zone->add_route(mirror->get_netpoint(), ha, nullptr, nullptr, *route, false);
    }

    // Representative to representative (e.g. pipeline-stage send/recv).
    for (std::size_t b = 0; b < ranks.size(); ++b) {
      if (a == b) continue;
      const int rb = ranks[b];
      const Ports& pb = ports[b];
      auto* hb = hosts_[static_cast<std::size_t>(rb)]->get_netpoint();
      const bool same_leaf = t.leaf_group_of_domain(t.domain_of(ra)) == t.leaf_group_of_domain(t.domain_of(rb)) &&
                             t.rail_of(ra) == t.rail_of(rb);
      if (t.domain_of(ra) == t.domain_of(rb))
        zone->add_route(ha, hb, nullptr, nullptr, {up(pa.nvl), down(pb.nvl)}, false);
      else if (same_leaf)
        zone->add_route(ha, hb, nullptr, nullptr, {up(pa.nic), up(pa.leaf_hop), down(pb.nic)}, false);
      else
        zone->add_route(ha, hb, nullptr, nullptr, {up(pa.nic), up(pa.share), down(pb.share), down(pb.nic)}, false);
    }
  }
  zone->seal();
}

}  // namespace moesim::platform
