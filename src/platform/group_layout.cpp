#include "group_layout.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace moesim::platform::detail {

int GroupLayout::member(int rank) const {
  auto it = member_of_rank.find(rank);
  if (it == member_of_rank.end())
    throw std::invalid_argument("collective: rank " + std::to_string(rank) + " is not a member of the group");
  return it->second;
}

double GroupLayout::spine_fraction_of_peers(int member) const {
  const auto m = static_cast<std::size_t>(member);
  const int outside_domain = size - members_in_domain_of(member);
  return outside_domain > 0 ? static_cast<double>(size - members_in_leaf_group[m]) / outside_domain : 0.0;
}

double GroupLayout::spine_fraction_of_domains(int member) const {
  const auto m = static_cast<std::size_t>(member);
  return domains > 1 ? static_cast<double>(domains - domains_in_leaf_group[m]) / (domains - 1) : 0.0;
}

GroupLayout analyse_group(const Topology& t, const Group& g) {
  GroupLayout l;
  l.ranks = g.ranks;
  l.size = static_cast<int>(g.ranks.size());
  if (l.size == 0) throw std::invalid_argument("collective: empty group");

  std::map<int, std::vector<int>> by_domain;  // domain id -> member indices (ordered by domain id)
  for (int m = 0; m < l.size; ++m) {
    const int r = g.ranks[static_cast<std::size_t>(m)];
    if (r < 0 || r >= t.gpus)
      throw std::invalid_argument("collective: rank " + std::to_string(r) + " outside 0.." + std::to_string(t.gpus - 1));
    if (!l.member_of_rank.emplace(r, m).second)
      throw std::invalid_argument("collective: rank " + std::to_string(r) + " appears twice in the group");
    by_domain[t.domain_of(r)].push_back(m);
  }

  l.domains = static_cast<int>(by_domain.size());
  l.domain_index.assign(static_cast<std::size_t>(l.size), 0);
  l.local_index.assign(static_cast<std::size_t>(l.size), 0);
  l.min_per_domain = l.size;
  for (auto& [domain, members] : by_domain) {
    std::sort(members.begin(), members.end(), [&](int a, int b) {
      return g.ranks[static_cast<std::size_t>(a)] < g.ranks[static_cast<std::size_t>(b)];
    });
    const int di = static_cast<int>(l.domain_members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
      l.domain_index[static_cast<std::size_t>(members[i])] = di;
      l.local_index[static_cast<std::size_t>(members[i])] = static_cast<int>(i);
    }
    const int count = static_cast<int>(members.size());
    l.domain_members_count.push_back(count);
    l.min_per_domain = std::min(l.min_per_domain, count);
    l.max_per_domain = std::max(l.max_per_domain, count);
    l.domain_members.push_back(std::move(members));
  }

  // Leaf groups of the spanned domains (domain indices are in increasing domain id).
  std::map<int, std::vector<int>> domains_by_leaf;  // leaf group -> domain indices
  {
    int di = 0;
    for (const auto& [domain, members] : by_domain) {
      const int leaf = t.leaf_group_of_domain(domain);
      l.domain_leaf_group.push_back(leaf);
      domains_by_leaf[leaf].push_back(di++);
    }
  }
  l.leaf_groups = static_cast<int>(domains_by_leaf.size());
  std::map<int, int> members_by_leaf;
  for (int m = 0; m < l.size; ++m)
    ++members_by_leaf[l.domain_leaf_group[static_cast<std::size_t>(l.domain_index[static_cast<std::size_t>(m)])]];
  l.members_in_leaf_group.assign(static_cast<std::size_t>(l.size), 0);
  l.domains_in_leaf_group.assign(static_cast<std::size_t>(l.size), 0);
  for (int m = 0; m < l.size; ++m) {
    const int leaf = l.domain_leaf_group[static_cast<std::size_t>(l.domain_index[static_cast<std::size_t>(m)])];
    l.members_in_leaf_group[static_cast<std::size_t>(m)] = members_by_leaf[leaf];
    l.domains_in_leaf_group[static_cast<std::size_t>(m)] = static_cast<int>(domains_by_leaf[leaf].size());
  }

  for (int rank : l.ranks) l.nic_speed = std::min(l.nic_speed, t.nic_speed_of(rank));
  if (l.leaf_groups > 1)
    for (const auto& [leaf, dis] : domains_by_leaf) l.uplink_speed = std::min(l.uplink_speed, t.uplink_speed_of(leaf));

  l.nvl_next.assign(static_cast<std::size_t>(l.size), -1);
  for (int m = 0; m < l.size; ++m) {
    const auto mi = static_cast<std::size_t>(m);
    const auto& own = l.domain_members[static_cast<std::size_t>(l.domain_index[mi])];
    if (own.size() > 1) l.nvl_next[mi] = own[(static_cast<std::size_t>(l.local_index[mi]) + 1) % own.size()];
  }

  // Leaf and spine peers: the same local index in the next spanned domain of the own leaf
  // group, and in the domain at the same position of the next spanned leaf group.
  std::vector<std::vector<int>> leaf_domains;
  for (const auto& [leaf, dis] : domains_by_leaf) leaf_domains.push_back(dis);
  std::map<int, int> leaf_position;  // leaf group -> index in leaf_domains
  for (const auto& [leaf, dis] : domains_by_leaf) leaf_position.emplace(leaf, static_cast<int>(leaf_position.size()));
  l.leaf_peer.assign(static_cast<std::size_t>(l.size), -1);
  l.spine_peer.assign(static_cast<std::size_t>(l.size), -1);
  l.leaf_in_count.assign(static_cast<std::size_t>(l.size), 0);
  l.spine_in_count.assign(static_cast<std::size_t>(l.size), 0);
  auto same_local_index = [&](int member, int domain_index) {
    const auto& members = l.domain_members[static_cast<std::size_t>(domain_index)];
    return members[static_cast<std::size_t>(l.local_index[static_cast<std::size_t>(member)]) % members.size()];
  };
  for (int m = 0; m < l.size; ++m) {
    const auto mi = static_cast<std::size_t>(m);
    const int di = l.domain_index[mi];
    const int li = leaf_position[l.domain_leaf_group[static_cast<std::size_t>(di)]];
    const auto& own = leaf_domains[static_cast<std::size_t>(li)];
    const auto pos = static_cast<std::size_t>(std::find(own.begin(), own.end(), di) - own.begin());
    if (own.size() > 1) {
      l.leaf_peer[mi] = same_local_index(m, own[(pos + 1) % own.size()]);
      ++l.leaf_in_count[static_cast<std::size_t>(l.leaf_peer[mi])];
    }
    if (leaf_domains.size() > 1) {
      const auto& next = leaf_domains[(static_cast<std::size_t>(li) + 1) % leaf_domains.size()];
      l.spine_peer[mi] = same_local_index(m, next[pos % next.size()]);
      ++l.spine_in_count[static_cast<std::size_t>(l.spine_peer[mi])];
    }
  }
  return l;
}

}  // namespace moesim::platform::detail
