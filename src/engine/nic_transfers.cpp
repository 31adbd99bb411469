#include "nic_transfers.hpp"

#include <simgrid/s4u.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace moesim::engine {

namespace sg4 = simgrid::s4u;

double NicTransfers::latency_s(int from, int to) { return network_.latency_s(route(from, to)); }

// The route from GPU `from` to GPU `to`: one of the sender's recent ones, else the table's.
int NicTransfers::route(int from, int to) {
  RecentRoutes& recent = recent_[static_cast<std::size_t>(from)];
  if (recent[0].to == to) return recent[0].route;
  if (recent[1].to == to) {
    std::swap(recent[0], recent[1]);
    return recent[0].route;
  }
  recent[1] = recent[0];
  recent[0] = {.to = to, .route = lookup(from, to)};
  return recent[0].route;
}

// The SimGrid route's links as FlowNetwork links, once per pair of GPUs.
int NicTransfers::lookup(int from, int to) {
  const std::uint64_t key = static_cast<std::uint64_t>(from) * gpus_.size() + static_cast<std::uint64_t>(to);
  if (const int* known = route_index_.find(key)) return *known;
  std::vector<sg4::Link*> links;
  double latency = 0;
  platform_.host(gpus_[static_cast<std::size_t>(from)].rank)
      ->route_to(platform_.host(gpus_[static_cast<std::size_t>(to)].rank), links, &latency);
  std::vector<int> indices;
  for (const sg4::Link* link : links) {
    // The platform's links are all shared (split-duplex ones are a shared link each way).
    if (link->get_sharing_policy() != sg4::Link::SharingPolicy::SHARED)
      throw std::logic_error("full fidelity: link " + link->get_name() + " is not a shared link");
    auto [it, added] = link_index_.try_emplace(link, 0);
    if (added) it->second = network_.add_link(link->get_bandwidth());
    indices.push_back(it->second);
  }
  const int index = network_.add_route(indices, latency);
  route_index_.add(key, index);
  return index;
}

}  // namespace moesim::engine
