#include "member_parts.hpp"

#include <algorithm>
#include <stdexcept>

namespace moesim::engine {

namespace {

// Where `rank` is in the group: groups list their ranks in increasing order, but a search that
// misses falls back to a scan.
int place_in(const platform::Group& group, int rank) {
  const std::vector<int>& ranks = group.ranks;
  auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end() || *it != rank) it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) throw std::logic_error("rank " + std::to_string(rank) + " is not in its collective's group");
  return static_cast<int>(it - ranks.begin());
}

}  // namespace

std::pair<const platform::FullMemberPart*, int> MemberParts::get(const platform::Group& group,
                                                                 const platform::TierLoad& load, int rank) {
  platform::FullMemberPart part = platform::full_member_part(p_, group, load, rank);
  const int size = static_cast<int>(group.ranks.size());
  const int self = place_in(group, rank);
  // The part's contents, byte for byte, as its key.
  std::string key;
  const auto put = [&key](const auto& value) { key.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  put(part.sequential);
  put(part.library_latency_s);
  for (platform::FullTier& tier : part.tiers) {
    put(tier.incoming_leaf);
    put(tier.incoming_spine);
    put(tier.extra_latency_s);
    put(tier.sends.size());
    for (platform::FullTransfer& send : tier.sends) {
      if (send.route != platform::FullRoute::nvlink) send.to_rank = (place_in(group, send.to_rank) - self + size) % size;
      put(send.route);
      put(send.to_rank);
      put(send.bytes);
      put(send.rate_cap);
    }
  }
  auto [it, added] = parts_.try_emplace(std::move(key));
  if (added) it->second = std::make_unique<platform::FullMemberPart>(std::move(part));
  return {it->second.get(), self};
}

}  // namespace moesim::engine
