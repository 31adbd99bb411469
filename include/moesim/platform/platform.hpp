#pragma once
// The SimGrid platform (S4U, no XML): GPUs as hosts, one split-duplex NVLink port per GPU into a
// non-blocking NVSwitch (a FullZone per domain), one split-duplex NIC per GPU into the leaf of its
// rail (rail-optimised: a leaf serves one local index of a leaf group of domains), and the
// leaves' uplinks to a non-blocking spine, each shared by its leaf's GPUs (capacity = ports x
// nic / oversubscription).
//
// Two shapes (docs/method.md, "Platform and engine"):
//  - full: one host per GPU of the topology;
//  - folded: one host per listed representative rank (its global rank id), each with its own
//    NVLink port and NIC, and a private share of the spine (nic / oversubscription), so that a
//    symmetric collective run by the representative alone loads its ports exactly as in the
//    full platform.
// SimGrid allows one platform per process: build it once, right after creating the Engine
// (make_engine()). Tests that need several platforms run each in a child (isolated_run.hpp).
//
// Latencies: an NVLink port has nvlink_latency_s / 2 per direction, so GPU -> NVSwitch -> GPU
// costs nvlink_latency_s; a NIC has nic_latency_s; every path between domains costs
// Topology::scaleout_latency_s() = 2 nic + 3 switch hops (under one leaf too, see there): full,
// uplink, spine, uplink one hop each, a leaf switch three; folded, an uplink share 1.5 per
// traversal, the leaf crossing three.
#include <memory>
#include <string_view>
#include <vector>

#include <simgrid/s4u.hpp>

#include "moesim/platform/topology.hpp"

namespace moesim::platform {

enum class Fidelity { folded, full };

// Engine settings under which flow-level transfers equal their closed forms
// (SG-CFG in docs/sources.md): CM02, no cross-traffic, huge TCP-gamma. Call before build().
void configure_engine();

// Creates this process's one Engine (argv {"moesim"}), silences SimGrid's logs below
// "critical" and calls configure_engine(). Call once per process (e.g. inside run_isolated).
std::unique_ptr<simgrid::s4u::Engine> make_engine();

class Platform {
 public:
  // folded: `ranks` lists the representatives (global rank ids, any order, no duplicates);
  // full: `ranks` is ignored and every GPU of the topology becomes a host.
  static std::unique_ptr<Platform> build(const Topology& topology, Fidelity fidelity,
                                         const std::vector<int>& ranks = {});
  virtual ~Platform() = default;

  const Topology& topology() const { return topology_; }
  Fidelity fidelity() const { return fidelity_; }
  simgrid::s4u::Host* host(int rank) const;  // throws std::out_of_range for a rank not built
  bool has_host(int rank) const;             // whether `rank` was built as a host

  // Routes used by collectives. A "loop" route goes out of a GPU's port and back into the same
  // GPU's port (UP then DOWN of one split-duplex link): in folded mode it stands for "send X to
  // symmetric peers and receive X from them" on that tier. Folded only: in full mode these
  // throw std::logic_error.
  simgrid::s4u::Host* nvlink_mirror(int rank) const;   // host reached over [nvl UP, nvl DOWN]
  simgrid::s4u::Host* leaf_mirror(int rank) const;     // over [nic UP, leaf switch, nic DOWN]
  simgrid::s4u::Host* scaleout_mirror(int rank) const; // over [nic UP, uplink share, nic DOWN]

  // Folded only: the mailbox through which `rank` sends to its mirror on a route (0 NVLink, 1 NIC
  // under the leaf, 2 NIC and spine)
  // for the stream `tag`. A daemon actor on the mirror host receives from it forever, so each
  // transfer is a mailbox comm (which, unlike a host-to-host one in SimGrid 3.32, honours
  // Comm::set_rate) and concurrent streams flow side by side. Call from inside an actor.
  simgrid::s4u::Mailbox* mirror_mailbox(int rank, int tier, std::string_view tag) const;

  // Full only: starts `bytes` out of `rank`'s NVLink port (capped at `rate_cap` bytes/s when
  // positive) and returns the activity; the caller adds the port-to-port latency. The port is a
  // resource of SimGrid's CPU model (a host of the port's speed, one per GPU) rather than a link:
  // the NVSwitch is non-blocking, so a GPU's NVLink flows compete only for its own ports, and
  // the symmetric collectives that use them load a GPU's ingress as its egress. The CPU model
  // updates lazily, so an event no longer re-solves every NVLink flow in the system, which the
  // network model under network/optim:Full does (engine_setup.cpp; bench/README.md).
  simgrid::s4u::ExecPtr start_nvlink_egress(int rank, double bytes, double rate_cap) const;

  // Derived per-group data (placement, ring neighbours) cached by the collectives; opaque here.
  struct GroupCache;
  GroupCache& group_cache() const;

 protected:
  Platform(Topology t, Fidelity f) : topology_(t), fidelity_(f) {}
  Topology topology_;
  Fidelity fidelity_;
  std::vector<simgrid::s4u::Host*> hosts_;          // indexed by rank (nullptr if not built)
  std::vector<simgrid::s4u::Host*> nvlink_ports_;   // full only: each GPU's NVLink egress port
  std::vector<simgrid::s4u::Host*> nvlink_mirror_;  // folded only
  std::vector<simgrid::s4u::Host*> leaf_mirror_;
  std::vector<simgrid::s4u::Host*> scaleout_mirror_;

 private:
  void build_full();
  void build_folded(const std::vector<int>& ranks);
  mutable std::shared_ptr<GroupCache> group_cache_;  // shared_ptr: deletable while incomplete
  mutable std::shared_ptr<void> sinks_;              // mailboxes that have a receiving daemon
};

}  // namespace moesim::platform
