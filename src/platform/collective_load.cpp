// What each algorithm moves through a member's ports (see nccl.hpp for the algorithms).
#include "collective_load.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moesim::platform::detail {
namespace {

// Marks a tier used when it carries bytes (or, with no bytes at all, when the algorithm would
// use it: a zero-byte collective still pays its latency).
void use(double bytes, bool would_use, int steps, double& tier_bytes, int& tier_steps) {
  tier_bytes = bytes;
  tier_steps = (bytes > 0 || would_use) ? steps : 0;
}

// A ring of n members through d domains moves (n-1)/n S per member and step set; k-1 of every
// k ring edges of a member's domain are NVLink and one is the NIC.
TierLoad ring(const GroupLayout& l, int member, double per_member_bytes, int steps) {
  TierLoad load;
  const int k = l.members_in_domain_of(member);
  if (l.domains == 1) {
    use(per_member_bytes, true, steps, load.nvlink_bytes, load.nvlink_steps);
    return load;
  }
  use(per_member_bytes * (k - 1) / k, k > 1, steps, load.nvlink_bytes, load.nvlink_steps);
  use(per_member_bytes / k, true, steps, load.nic_bytes, load.nic_steps);
  // The ring visits the domains of a leaf group in a row: s of its d inter-domain edges leave a
  // leaf group when it spans s > 1 of them.
  split_spine(load, l.leaf_groups > 1 ? static_cast<double>(l.leaf_groups) / l.domains : 0.0);
  return load;
}

[[noreturn]] void unsupported(NcclAlgorithm a, CollectiveKind kind) {
  throw std::invalid_argument("collective: algorithm " + std::string(to_string(a)) + " does not implement " +
                              std::string(to_string(kind)));
}

}  // namespace

double double_binary_tree_peak_sends(int nodes) {
  if (nodes <= 1) return 0;
  if (nodes == 2) return 1;
  if (nodes == 3) return 1.5;
  return 2;
}

TierLoad algorithm_load(NcclAlgorithm algorithm, CollectiveKind kind, const GroupLayout& l, int member,
                        double bytes, int nccl_version) {
  if (bytes < 0) throw std::invalid_argument("collective: negative byte count");
  const int n = l.size;
  const int k = l.members_in_domain_of(member);
  const int d = l.domains;
  const bool reduction = kind == CollectiveKind::all_reduce;
  TierLoad load;
  switch (algorithm) {
    case NcclAlgorithm::p2p: {
      if (kind == CollectiveKind::send_recv) {
        if (n != 2) throw std::invalid_argument("send_recv: the group must be {sender, receiver}");
        // Sender and receiver carry the same bytes on the same tier.
        if (d == 1) use(bytes, true, 1, load.nvlink_bytes, load.nvlink_steps);
        else use(bytes, true, 1, load.nic_bytes, load.nic_steps);
        split_spine(load, l.leaf_groups > 1 ? 1.0 : 0.0);
        return load;
      }
      if (kind != CollectiveKind::all_to_all) unsupported(algorithm, kind);
      use((k - 1) * bytes, k > 1, 1, load.nvlink_bytes, load.nvlink_steps);
      use((n - k) * bytes, n > k, 1, load.nic_bytes, load.nic_steps);
      split_spine(load, l.spine_fraction_of_peers(member));
      return load;
    }
    case NcclAlgorithm::ring:
    case NcclAlgorithm::pat: {
      if (kind != CollectiveKind::all_gather && kind != CollectiveKind::reduce_scatter && !reduction)
        unsupported(algorithm, kind);
      if (algorithm == NcclAlgorithm::pat && (reduction || d == 1)) unsupported(algorithm, kind);
      const int half = n - 1;
      const double per_member = (reduction ? 2.0 : 1.0) * half * bytes / n;
      return ring(l, member, per_member, algorithm == NcclAlgorithm::pat ? 1 : (reduction ? 2 : 1) * half);
    }
    case NcclAlgorithm::tree: {
      if (!reduction || d == 1) unsupported(algorithm, kind);
      // Inside a domain the tree is a chain (S up, S down); across domains the member's NIC
      // carries its 1/k of the busiest node's double-binary-tree traffic, which every member is
      // timed with (the collective ends when that node does).
      use(2 * bytes * (k - 1) / k, k > 1, 1, load.nvlink_bytes, load.nvlink_steps);
      use(double_binary_tree_peak_sends(d) * bytes / k, true, 1, load.nic_bytes, load.nic_steps);
      split_spine(load, l.spine_fraction_of_domains(member));
      return load;
    }
    case NcclAlgorithm::nvls: {
      if (d != 1 || kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv)
        unsupported(algorithm, kind);
      // The switch reduces and multicasts (multimem): a port carries the slices the other members
      // read from it and its share of their results, S each way for an all-reduce and (n-1)/n S
      // for a reduce-scatter or all-gather; a member's own slice does not load its port. (Counting
      // it, S (n+1)/n, would make 64 GPUs' bus bandwidth 1.23 times 8 GPUs' on one GB300 rack;
      // OCI-QS measured 1.106, and S per port gives 1.11.)
      use(reduction ? bytes : bytes * (n - 1) / n, true, 1, load.nvlink_bytes, load.nvlink_steps);
      return load;
    }
    case NcclAlgorithm::nvls_tree: {
      if (!reduction || d == 1) unsupported(algorithm, kind);
      use(bytes, k > 1, 1, load.nvlink_bytes, load.nvlink_steps);  // NVLS inside the domain
      // Across domains only the heads' NICs carry the trees (NCCL connect.cc connectNvls): a
      // head sends and receives its 1/heads of the double binary tree's traffic. The collective
      // ends when the busiest node's heads do, so every member is timed as such a head; the
      // spine carries what the heads really send.
      const int heads = nvls_heads(k, nccl_version);
      use(double_binary_tree_peak_sends(d) * bytes / heads, true, 1, load.nic_bytes, load.nic_steps);
      split_spine(load, l.spine_fraction_of_domains(member) * heads / k);
      return load;
    }
  }
  unsupported(algorithm, kind);
}

}  // namespace moesim::platform::detail
