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

  l.nvl_next.assign(static_cast<std::size_t>(l.size), -1);
  l.nic_peer.assign(static_cast<std::size_t>(l.size), -1);
  l.nic_in_count.assign(static_cast<std::size_t>(l.size), 0);
  for (int m = 0; m < l.size; ++m) {
    const auto mi = static_cast<std::size_t>(m);
    const auto& own = l.domain_members[static_cast<std::size_t>(l.domain_index[mi])];
    if (own.size() > 1) l.nvl_next[mi] = own[(static_cast<std::size_t>(l.local_index[mi]) + 1) % own.size()];
    if (l.domains > 1) {
      const auto& next = l.domain_members[static_cast<std::size_t>((l.domain_index[mi] + 1) % l.domains)];
      const int peer = next[static_cast<std::size_t>(l.local_index[mi]) % next.size()];
      l.nic_peer[mi] = peer;
      ++l.nic_in_count[static_cast<std::size_t>(peer)];
    }
  }
  return l;
}

}  // namespace moesim::platform::detail
