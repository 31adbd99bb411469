#pragma once
// Private: how a group sits on the topology (members per NVLink domain) and, for the full
// fidelity, whom each member exchanges its aggregated bytes with. Built once per distinct group
// and cached on the Platform, so that a collective costs O(1) bookkeeping per rank.
#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "moesim/platform/collective.hpp"

namespace moesim::platform::detail {

struct GroupLayout {
  int size = 0;
  int domains = 0;              // domains spanned
  int min_per_domain = 0;
  int max_per_domain = 0;
  std::vector<int> ranks;       // as given (group order)
  std::vector<int> domain_members_count;          // by domain index (domains in increasing id)
  std::vector<std::vector<int>> domain_members;   // member indices, by domain index, rank order
  std::vector<int> domain_index;  // per member
  std::vector<int> local_index;   // per member: position among its domain's members
  std::unordered_map<int, int> member_of_rank;   // global rank -> member index
  // Rail-optimised leaves (topology.hpp): the leaf group of each spanned domain, how many
  // distinct leaf groups the group spans, and per member how many of its peers in other
  // domains sit under the same leaf group.
  std::vector<int> domain_leaf_group;             // by domain index
  int leaf_groups = 0;
  std::vector<int> members_in_leaf_group;         // per member: members in its leaf group (itself included)
  std::vector<int> domains_in_leaf_group;         // per member: spanned domains in its leaf group

  // The slowest NIC among the members and the slowest uplinks among the spanned leaf groups
  // (when traffic climbs to the spine), over their rated speeds (Topology's what-if faults).
  double nic_speed = 1.0;
  double uplink_speed = 1.0;

  // Full fidelity exchange pattern, chosen so each port carries exactly its own rank's bytes:
  // NVLink bytes go to the next member of the same domain (a ring, in-degree 1). NIC bytes that
  // stay under the leaf go to the member of the same local index (modulo that domain's count) in
  // the next spanned domain of the member's own leaf group (leaf_peer); those that climb to the
  // spine to the same local index in the domain at the same position of the next spanned leaf
  // group (spine_peer). In-degrees are 1 when the spanned domains and leaf groups hold equal
  // numbers of members. -1 where there is none.
  std::vector<int> nvl_next;
  std::vector<int> leaf_peer, spine_peer;
  std::vector<int> leaf_in_count, spine_in_count;  // how many members send to this one

  int members_in_domain_of(int member) const {
    return domain_members_count[static_cast<std::size_t>(domain_index[static_cast<std::size_t>(member)])];
  }
  int member(int rank) const;  // throws std::invalid_argument if rank is not in the group
  // Of a member's peers in other domains, the fraction in other leaf groups (p2p traffic).
  double spine_fraction_of_peers(int member) const;
  // Of a member's other spanned domains, the fraction in other leaf groups (tree-like traffic).
  double spine_fraction_of_domains(int member) const;
};

// Throws std::invalid_argument for an empty group, a rank outside the topology or a duplicate.
GroupLayout analyse_group(const Topology& t, const Group& g);

}  // namespace moesim::platform::detail

namespace moesim::platform {

struct Platform::GroupCache {
  // A group by its size and three of its ranks (first, middle, last): groups that share them
  // share a bucket, and the key's comparison (a memcmp) tells them apart. Hashing every rank
  // cost O(members) per lookup, a lookup per GPU and collective: n^2 for a data-parallel group
  // of half the GPUs (1 % of the full fidelity's time at 8,192 GPUs, and doubling with them).
  struct Hash {
    std::size_t operator()(const std::vector<int>& v) const noexcept {
      std::size_t h = v.size();
      if (!v.empty())
        for (int x : {v.front(), v[v.size() / 2], v.back()})
          h ^= std::hash<int>{}(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      return h;
    }
  };
  std::unordered_map<std::vector<int>, std::unique_ptr<detail::GroupLayout>, Hash> by_ranks;

  const detail::GroupLayout& get(const Topology& t, const Group& g) {
    auto it = by_ranks.find(g.ranks);
    if (it == by_ranks.end())
      it = by_ranks.emplace(g.ranks, std::make_unique<detail::GroupLayout>(detail::analyse_group(t, g))).first;
    return *it->second;
  }
};

}  // namespace moesim::platform
