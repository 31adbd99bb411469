#include "member_parts.hpp"

namespace moesim::engine {

std::pair<const platform::FullMemberPart*, int> MemberParts::get(const platform::Group& group,
                                                                 const platform::TierLoad& load, int rank) {
  platform::FullMemberPart part = platform::full_member_part(p_, group, load, rank);
  const int size = static_cast<int>(group.ranks.size());
  const int self = part.member;
  part.member = -1;  // a shared part is no one member's
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
      if (send.route != platform::FullRoute::nvlink) send.to_member = (send.to_member - self + size) % size;
      send.to_rank = -1;  // the offset names the receiver
      put(send.route);
      put(send.to_member);
      put(send.bytes);
      put(send.rate_cap);
    }
  }
  auto [it, added] = parts_.try_emplace(std::move(key));
  if (added) it->second = std::make_unique<platform::FullMemberPart>(std::move(part));
  return {it->second.get(), self};
}

}  // namespace moesim::engine
