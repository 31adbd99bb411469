#pragma once
// The cluster as numbers: how many GPUs, how they group into NVLink domains, and the bandwidth
// and latency of each tier. Built from a SystemSpec; used by the plan (placement, bottlenecks),
// the closed forms and the SimGrid platform builder.
#include <stdexcept>
#include <string>

#include "moesim/config/specs.hpp"

namespace moesim::platform {

struct Topology {
  int gpus = 0;
  int gpus_per_domain = 0;          // GPUs used per NVLink domain (<= the system's domain size)
  double gpu_flop_per_s = 0;        // dense peak in the run's precision
  double nvlink_bytes_per_s = 0;    // per GPU port, per direction
  double nvlink_latency_s = 0;      // one hop GPU -> NVSwitch -> GPU
  double nic_bytes_per_s = 0;       // per GPU NIC, per direction
  double nic_latency_s = 0;         // per NIC end
  double switch_latency_s = 0;      // per scale-out switch hop
  double oversubscription = 1.0;    // spine tier: leaf downlink / uplink bandwidth

  int domains() const { return (gpus + gpus_per_domain - 1) / gpus_per_domain; }
  int domain_of(int rank) const { return rank / gpus_per_domain; }
  // Bandwidth one GPU gets across the spine when every GPU of its domain sends at once.
  double spine_share_bytes_per_s() const { return nic_bytes_per_s / oversubscription; }
  // One-way latency of a message between two GPUs of different domains.
  double scaleout_latency_s() const { return 2 * nic_latency_s + 3 * switch_latency_s; }
};

// A topology value SimGrid would refuse or abort on (not finite, not positive, absurdly large),
// with the system key it comes from.
struct TopologyError : std::invalid_argument {
  TopologyError(const std::string& what, std::string key) : std::invalid_argument(what), system_key(std::move(key)) {}
  std::string system_key;  // e.g. "nic_gbits_per_s", "fabric.switch_latency_us"
};

// Every speed, bandwidth and latency the platform builder hands to SimGrid, derived ones
// included (spine share, domain uplink): finite, speeds and bandwidths > 0, latencies >= 0,
// all within what a double-precision simulation of a step can resolve. Throws TopologyError.
void check_topology(const Topology& t);

// gpus_per_domain = 0 takes the system's whole domain. Checked with check_topology().
Topology make_topology(const SystemSpec& system, int gpus, int gpus_per_domain, Precision precision);

}  // namespace moesim::platform
