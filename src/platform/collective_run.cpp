// Running a collective inside an actor, folded (one representative, loop routes) or full (every
// member, mailbox exchanges). Both move, per rank and tier, exactly the bytes of member_load()
// and add the latency of the steps beyond the first as a sleep, so on an idle platform both
// equal closed_form_seconds() and, under contention, the ports share bandwidth as SimGrid
// decides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_load.hpp"

namespace moesim::platform {

namespace sg4 = simgrid::s4u;
using detail::GroupLayout;

namespace {

std::uint64_t to_bytes(double bytes) { return bytes > 0 ? static_cast<std::uint64_t>(std::llround(bytes)) : 0; }

// One tier of a rank's part: its transfers and the latency of its remaining steps.
struct TierRun {
  std::vector<sg4::CommPtr> comms;
  double extra_latency_s = 0;  // (steps - 1) hop latencies, slept after the transfers
  double done_at = 0;          // simulated time its last transfer completed
};

double extra_latency(int steps, double hop_latency_s) { return steps > 1 ? (steps - 1) * hop_latency_s : 0.0; }

// Waits for every tier's transfers, then until each tier's remaining latency has elapsed.
// Concurrent tiers overlap, so each tier's end is tracked on its own.
void finish_concurrent(std::vector<TierRun>& tiers) {
  std::vector<sg4::CommPtr> pending;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < tiers.size(); ++i)
    for (auto& c : tiers[i].comms) {
      pending.push_back(c);
      owner.push_back(i);
    }
  const double start = sg4::Engine::get_clock();
  for (auto& tier : tiers) tier.done_at = start;
  while (!pending.empty()) {
    const auto idx = static_cast<std::size_t>(sg4::Comm::wait_any(pending));
    tiers[owner[idx]].done_at = sg4::Engine::get_clock();
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(idx));
    owner.erase(owner.begin() + static_cast<std::ptrdiff_t>(idx));
  }
  double end = sg4::Engine::get_clock();
  for (const auto& tier : tiers) end = std::max(end, tier.done_at + tier.extra_latency_s);
  if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end);
}

void finish_one(TierRun& tier) {
  sg4::Comm::wait_all(tier.comms);
  if (tier.extra_latency_s > 0) sg4::this_actor::sleep_for(tier.extra_latency_s);
}

// Starts a tier with `start` (which fills TierRun::comms): all at once, or one after the other.
template <class StartTier>
void run_tiers(const Topology& t, const TierLoad& load, StartTier&& start) {
  struct Spec {
    double bytes;
    int steps;
    double hop_latency_s;
    bool nvlink;
  };
  const Spec specs[2] = {{load.nvlink_bytes, load.nvlink_steps, t.nvlink_latency_s, true},
                         {load.nic_bytes, load.nic_steps, t.scaleout_latency_s(), false}};
  if (load.tiers_sequential) {
    for (const Spec& s : specs) {
      if (s.steps <= 0) continue;
      TierRun tier;
      tier.extra_latency_s = extra_latency(s.steps, s.hop_latency_s);
      start(s.nvlink, s.bytes, tier);
      finish_one(tier);
    }
    return;
  }
  std::vector<TierRun> tiers;
  tiers.reserve(2);
  for (const Spec& s : specs) {
    if (s.steps <= 0) continue;
    tiers.emplace_back();
    tiers.back().extra_latency_s = extra_latency(s.steps, s.hop_latency_s);
    start(s.nvlink, s.bytes, tiers.back());
  }
  finish_concurrent(tiers);
}

// ---- folded: the representative loads its own ports through loop routes -------------------

void run_folded(const Platform& p, CollectiveKind kind, const GroupLayout& l, double bytes, int self) {
  sg4::Host* h = p.host(self);
  if (kind == CollectiveKind::send_recv) {
    if (self != l.ranks[0]) return;  // folded: the sender carries the transfer alone
    const int receiver = l.ranks[1];
    sg4::Host* dst = p.has_host(receiver) ? p.host(receiver)
                     : l.domains == 1     ? p.nvlink_mirror(self)
                                          : p.scaleout_mirror(self);
    sg4::Comm::sendto(h, dst, to_bytes(bytes));
    return;
  }
  const TierLoad load = detail::member_load(kind, l, l.member(self), bytes);
  const Topology& t = p.topology();
  run_tiers(t, load, [&](bool nvlink, double tier_bytes, TierRun& tier) {
    const std::uint64_t size = to_bytes(tier_bytes);
    if (size == 0) {
      // SimGrid 3.32 never completes a 0-byte sendto_async under Comm::wait_any (deadlock
      // report; wait() works). Nothing competes for bandwidth, so its one hop is a sleep.
      tier.extra_latency_s += nvlink ? t.nvlink_latency_s : t.scaleout_latency_s();
      return;
    }
    sg4::Host* mirror = nvlink ? p.nvlink_mirror(self) : p.scaleout_mirror(self);
    tier.comms.push_back(sg4::Comm::sendto_async(h, mirror, size));
  });
}

// ---- full: every member exchanges its aggregated bytes with one peer per tier ---------------

// Mailboxes are named by (tag, tier, receiver) so concurrent collectives never match each
// other's messages; successive collectives with the same tag match in FIFO order.
sg4::Mailbox* mailbox(std::string_view tag, bool nvlink, int receiver_rank) {
  std::string name;
  name.reserve(tag.size() + 16);
  name.append(tag).append(nvlink ? "/nvl/" : "/nic/").append(std::to_string(receiver_rank));
  return sg4::Mailbox::by_name(name);
}

char g_payload;  // mailbox puts need a non-null payload; its content is never read

void run_full(const GroupLayout& l, CollectiveKind kind, const Topology& t, double bytes, int self,
              std::string_view tag) {
  const int m = l.member(self);
  const auto mi = static_cast<std::size_t>(m);

  if (kind == CollectiveKind::send_recv) {
    const bool nvlink = l.domains == 1;
    if (m == 0) {
      mailbox(tag, nvlink, l.ranks[1])->put(&g_payload, to_bytes(bytes));
    } else {
      void* received = nullptr;
      mailbox(tag, nvlink, self)->get_async<void>(&received)->wait();
    }
    return;
  }

  // Where incoming payload pointers land; sized up front so the slots never move.
  std::vector<void*> received(static_cast<std::size_t>(1 + l.nic_in_count[mi]), nullptr);
  std::size_t next_slot = 0;
  const TierLoad load = detail::member_load(kind, l, m, bytes);
  run_tiers(t, load, [&](bool nvlink, double tier_bytes, TierRun& tier) {
    const int peer = nvlink ? l.nvl_next[mi] : l.nic_peer[mi];
    const int incoming = nvlink ? 1 : l.nic_in_count[mi];
    tier.comms.push_back(mailbox(tag, nvlink, l.ranks[static_cast<std::size_t>(peer)])
                             ->put_async(&g_payload, to_bytes(tier_bytes)));
    sg4::Mailbox* inbox = mailbox(tag, nvlink, self);
    for (int i = 0; i < incoming; ++i) tier.comms.push_back(inbox->get_async<void>(&received[next_slot++]));
  });
}

}  // namespace

void run_collective(Platform& p, CollectiveKind kind, const Group& g, double bytes, int self, std::string_view tag) {
  const GroupLayout& l = p.group_cache().get(p.topology(), g);
  if (kind == CollectiveKind::send_recv && l.size != 2)
    throw std::invalid_argument("send_recv: the group must be {sender, receiver}");
  if (l.size <= 1) return;
  if (p.fidelity() == Fidelity::folded)
    run_folded(p, kind, l, bytes, self);
  else
    run_full(l, kind, p.topology(), bytes, self, tag);
}

}  // namespace moesim::platform
