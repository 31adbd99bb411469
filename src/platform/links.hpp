#pragma once
// Private helpers of the platform builders: split-duplex links and their directed halves.
#include <string>

#include <simgrid/s4u.hpp>

namespace moesim::platform::detail {

using Dir = simgrid::s4u::LinkInRoute::Direction;

// A SHARED split-duplex link (each direction its own constraint of `bytes_per_s`).
// set_latency() returns Link*, not SplitDuplexLink*, hence the two steps (notes §5, pitfall 7).
inline simgrid::s4u::SplitDuplexLink* duplex(simgrid::s4u::NetZone* zone, const std::string& name,
                                             double bytes_per_s, double latency_s) {
  auto* link = zone->create_split_duplex_link(name, bytes_per_s);
  link->set_latency(latency_s);
  link->seal();
  return link;
}

inline simgrid::s4u::LinkInRoute up(const simgrid::s4u::SplitDuplexLink* l) { return {l, Dir::UP}; }
inline simgrid::s4u::LinkInRoute down(const simgrid::s4u::SplitDuplexLink* l) { return {l, Dir::DOWN}; }

inline std::string gpu_name(int rank) { return "gpu-" + std::to_string(rank); }

// A switch crossing that never limits bandwidth (its ports are modelled as the links around it):
// a SHARED link this fast is never a bottleneck (a FATPIPE would be, for the solver: notes §5).
inline constexpr double kUnboundedBytesPerS = 1e15;

// A folded uplink share carries 1.5 switch hops, so its two traversals make the three hops
// leaf -> spine -> leaf of a route between leaf groups (the full platform has a link per hop).
inline double uplink_latency_s(double switch_latency_s) { return 1.5 * switch_latency_s; }

}  // namespace moesim::platform::detail
