#pragma once
// Private to the engine: the full fidelity's members' parts of collectives
// (platform::full_member_part), each kept once however many members run it.
//
// A part names its NIC receivers by rank, so every member's differs. Counted instead from the
// member's own place in the group (an offset, modulo the group's size), the parts of most
// members are the same: a ring's every member sends to the next, an all-to-all's to each other
// member. The event core then holds a handful of parts instead of one per GPU and collective.
// Past a thousand GPUs the private copies were out of the caches by the time each collective
// started; the shared ones stay in.
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "moesim/platform/collective.hpp"

namespace moesim::engine {

class MemberParts {
 public:
  explicit MemberParts(const platform::Platform& p) : p_(p) {}

  // Member `rank`'s part of a collective of `load` on `group`, its NIC sends' to_member an offset
  // from the member's place (to_rank dropped); and that place (group.ranks[place] == rank).
  std::pair<const platform::FullMemberPart*, int> get(const platform::Group& group, const platform::TierLoad& load,
                                                      int rank);

  // The rank a send of the member at `place` goes to.
  static int receiver(const platform::Group& group, int place, const platform::FullTransfer& send) {
    const auto size = group.ranks.size();
    return group.ranks[(static_cast<std::size_t>(place) + static_cast<std::size_t>(send.to_member)) % size];
  }

  std::size_t size() const { return parts_.size(); }

 private:
  const platform::Platform& p_;
  std::unordered_map<std::string, std::unique_ptr<platform::FullMemberPart>> parts_;  // by contents
};

}  // namespace moesim::engine
