// Running a member's plan inside an actor, folded (one representative, loop routes) or full
// (every member, mailbox exchanges). Both move, per rank and tier, exactly the plan's bytes, each
// transfer capped at the tier's achieved rate, and add the latency of the steps beyond the first
// and the library's latency as sleeps, so on an idle platform both equal tier_seconds() and,
// under contention, the ports share bandwidth as SimGrid decides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_load.hpp"
#include "moesim/platform/nccl.hpp"

namespace moesim::platform {

namespace sg4 = simgrid::s4u;
using detail::GroupLayout;

namespace {

std::uint64_t to_bytes(double bytes) { return bytes > 0 ? static_cast<std::uint64_t>(std::llround(bytes)) : 0; }

// One tier of a rank's part: its transfers and the latency of its remaining steps.
struct TierRun {
  std::vector<sg4::ActivityPtr> activities;  // its transfers (comms, or execs on NVLink ports)
  double extra_latency_s = 0;  // (steps - 1) hop latencies, slept after the transfers
  double done_at = 0;          // simulated time its last transfer completed
};

double extra_latency(int steps, double hop_latency_s) { return steps > 1 ? (steps - 1) * hop_latency_s : 0.0; }

// Waits for every tier's transfers, then until each tier's remaining latency has elapsed, and
// then `then_s` more (the library's latency: one sleep instead of two, a SimGrid activity less).
// Concurrent tiers overlap, so each tier's end is tracked on its own.
void finish_concurrent(std::vector<TierRun>& tiers, double then_s) {
  std::vector<sg4::ActivityPtr> pending;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < tiers.size(); ++i)
    for (auto& c : tiers[i].activities) {
      pending.push_back(c);
      owner.push_back(i);
    }
  const double start = sg4::Engine::get_clock();
  for (auto& tier : tiers) tier.done_at = start;
  while (!pending.empty()) {
    const auto idx = static_cast<std::size_t>(sg4::Activity::wait_any(pending));
    tiers[owner[idx]].done_at = sg4::Engine::get_clock();
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(idx));
    owner.erase(owner.begin() + static_cast<std::ptrdiff_t>(idx));
  }
  double end = sg4::Engine::get_clock();
  for (const auto& tier : tiers) end = std::max(end, tier.done_at + tier.extra_latency_s);
  end += then_s;
  if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end);
}

void finish_one(TierRun& tier, double then_s) {
  for (auto& a : tier.activities) a->wait();
  if (tier.extra_latency_s + then_s > 0) sg4::this_actor::sleep_for(tier.extra_latency_s + then_s);
}

using Route = FullRoute;

// One flow of a plan's tier: its bytes and the rate cap of its transfer (0: none).
struct Flow {
  Route route;
  double bytes;
  double rate_cap;
};

// One tier of a plan: its flows and its latency-bound steps.
struct TierSpec {
  int steps;
  double hop_latency_s;
  std::vector<Flow> flows;
};

struct TierSpecs {
  std::vector<TierSpec> tiers;
  bool sequential = false;
  double library_latency_s = 0;  // after the last tier
};

// A plan's tiers as flows. The NIC tier is two flows when part of it stays under the leaf and
// part climbs to the spine; its rate cap is split in proportion.
//
// Degraded links (the scenario's fabric_faults): the full platform builds them slower; the folded
// representative's NIC and uplink share are never the degraded ones, so where its group has a
// slower NIC or spans slower uplinks its flows are capped at their rate: every member of a
// collective waits for its slowest member's data.
TierSpecs tier_specs(const Topology& t, const GroupLayout& l, bool folded, const TierLoad& load) {
  // A cap at or above the port's rate changes nothing: leave the flow uncapped.
  const double nvl_cap = detail::nvlink_rate(t, load) < detail::port_nvlink_rate(t) ? detail::nvlink_rate(t, load) : 0;
  double nic_cap = detail::nic_rate(t, load) < detail::port_nic_rate(t) ? detail::nic_rate(t, load) : 0;
  if (folded && l.nic_speed < 1) nic_cap = std::min(detail::nic_rate(t, load), l.nic_speed * detail::port_nic_rate(t));
  const double slow_spine_cap = folded && l.uplink_speed < 1 ? l.uplink_speed * t.spine_share_bytes_per_s() : 0;
  TierSpecs specs;
  if (load.nvlink_steps > 0)
    specs.tiers.push_back({load.nvlink_steps, t.nvlink_latency_s, {{Route::nvlink, load.nvlink_bytes, nvl_cap}}});
  if (load.nic_steps > 0) {
    TierSpec nic{load.nic_steps, detail::nic_hop_latency_s(t), {}};
    const double spine = std::min(load.spine_bytes, load.nic_bytes);
    const double leaf = load.nic_bytes - spine;
    auto share = [&](double part) { return nic_cap > 0 && load.nic_bytes > 0 ? nic_cap * part / load.nic_bytes : 0.0; };
    if (leaf > 0) nic.flows.push_back({Route::leaf, leaf, share(leaf)});
    if (spine > 0) {
      double cap = share(spine);  // 0: uncapped
      if (slow_spine_cap > 0 && (cap <= 0 || slow_spine_cap < cap)) cap = slow_spine_cap;
      nic.flows.push_back({Route::spine, spine, cap});
    }
    if (nic.flows.empty()) nic.flows.push_back({load.crosses_spine ? Route::spine : Route::leaf, 0.0, 0.0});
    specs.tiers.push_back(std::move(nic));
  }
  specs.sequential = load.tiers_sequential;
  specs.library_latency_s = load.latency_s > 0 ? load.latency_s : 0;
  return specs;
}

// Runs `count` tiers whose activities and extra latency `start(i, tier)` sets: all at once, or
// one after the other; then the library's latency.
template <class StartTier>
void run_tiers(std::size_t count, bool sequential, double library_latency_s, StartTier&& start) {
  if (sequential) {
    for (std::size_t i = 0; i < count; ++i) {
      TierRun tier;
      start(i, tier);
      finish_one(tier, i + 1 == count ? library_latency_s : 0);
    }
  } else if (count > 0) {
    std::vector<TierRun> tiers(count);
    for (std::size_t i = 0; i < count; ++i) start(i, tiers[i]);
    finish_concurrent(tiers, library_latency_s);
  }
}

char g_payload;  // mailbox puts need a non-null payload; its content is never read

// A mailbox put, capped at `rate_cap` bytes/s when positive.
sg4::CommPtr put_async(sg4::Mailbox* box, std::uint64_t size, double rate_cap) {
  if (rate_cap <= 0) return box->put_async(&g_payload, size);
  sg4::CommPtr c = box->put_init(&g_payload, size);
  c->set_rate(rate_cap);
  c->start();
  return c;
}

// ---- folded: the representative loads its own ports through loop routes -------------------

// A host-to-host transfer, capped at `rate_cap` bytes/s when positive.
sg4::CommPtr send_async(sg4::Host* from, sg4::Host* to, std::uint64_t size, double rate_cap) {
  if (rate_cap <= 0) return sg4::Comm::sendto_async(from, to, size);
  // The rate must be set while the comm is INITED: before both ends are known (setting the
  // second one makes SimGrid 3.32 start it).
  sg4::CommPtr c = sg4::Comm::sendto_init();
  c->set_rate(rate_cap);
  c->set_payload_size(size);
  c->set_source(from);
  c->set_destination(to);
  if (c->get_state() == sg4::Activity::State::INITED) c->start();
  return c;
}

// Folded send_recv: the sender carries the transfer alone, to the receiver's representative or
// over its own loop route of the tier.
void send_folded(const Platform& p, const GroupLayout& l, const TierLoad& load, int self) {
  if (self != l.ranks[0]) return;
  const int receiver = l.ranks[1];
  sg4::Host* dst = p.has_host(receiver) ? p.host(receiver)
                   : l.domains == 1     ? p.nvlink_mirror(self)
                   : l.leaf_groups > 1  ? p.scaleout_mirror(self)
                                        : p.leaf_mirror(self);
  const bool nvlink = l.domains == 1;
  const Topology& t = p.topology();
  const double rate = nvlink ? detail::nvlink_rate(t, load) : detail::nic_rate(t, load);
  const double port = nvlink ? detail::port_nvlink_rate(t) : detail::port_nic_rate(t);
  send_async(p.host(self), dst, to_bytes(nvlink ? load.nvlink_bytes : load.nic_bytes), rate < port ? rate : 0)->wait();
  if (load.latency_s > 0) sg4::this_actor::sleep_for(load.latency_s);
}

double route_latency_s(const Topology& t, Route r) {
  return r == Route::nvlink ? t.nvlink_latency_s : t.scaleout_latency_s();
}

void run_folded(const Platform& p, const GroupLayout& l, const TierLoad& load, int self, std::string_view tag) {
  const Topology& t = p.topology();
  const TierSpecs specs = tier_specs(t, l, true, load);
  run_tiers(specs.tiers.size(), specs.sequential, specs.library_latency_s, [&](std::size_t i, TierRun& tier) {
    tier.extra_latency_s = extra_latency(specs.tiers[i].steps, specs.tiers[i].hop_latency_s);
    for (const Flow& f : specs.tiers[i].flows) {
      const std::uint64_t size = to_bytes(f.bytes);
      if (size == 0) {
        // SimGrid 3.32 never completes a 0-byte comm under Comm::wait_any (deadlock report;
        // wait() works). Nothing competes for bandwidth, so its one hop is a sleep.
        tier.extra_latency_s += route_latency_s(t, f.route);
        continue;
      }
      tier.activities.push_back(put_async(p.mirror_mailbox(self, static_cast<int>(f.route), tag), size, f.rate_cap));
    }
  });
}

// ---- full: every member exchanges its aggregated bytes with one peer per tier ---------------

// Mailboxes are named by (tag, route, receiver) so concurrent collectives never match each
// other's messages; successive collectives with the same tag match in FIFO order.
sg4::Mailbox* mailbox(std::string_view tag, Route route, int receiver_rank) {
  static const char* const names[] = {"/nvl/", "/leaf/", "/spine/"};
  std::string name;
  name.reserve(tag.size() + 16);
  name.append(tag).append(names[static_cast<int>(route)]).append(std::to_string(receiver_rank));
  return sg4::Mailbox::by_name(name);
}

void send_full(const GroupLayout& l, const TierLoad& load, const Topology& t, int self, std::string_view tag) {
  const bool nvlink = l.domains == 1;
  const Route route = nvlink ? Route::nvlink : l.leaf_groups > 1 ? Route::spine : Route::leaf;
  if (l.member(self) == 0) {
    const double rate = nvlink ? detail::nvlink_rate(t, load) : detail::nic_rate(t, load);
    const double port = nvlink ? detail::port_nvlink_rate(t) : detail::port_nic_rate(t);
    put_async(mailbox(tag, route, l.ranks[1]), to_bytes(nvlink ? load.nvlink_bytes : load.nic_bytes),
              rate < port ? rate : 0)
        ->wait();
  } else {
    void* received = nullptr;
    mailbox(tag, route, self)->get_async<void>(&received)->wait();
  }
  if (load.latency_s > 0) sg4::this_actor::sleep_for(load.latency_s);
}

FullMemberPart member_part(const Platform& p, const GroupLayout& l, const TierLoad& load, int self) {
  const Topology& t = p.topology();
  const auto mi = static_cast<std::size_t>(l.member(self));
  const TierSpecs specs = tier_specs(t, l, false, load);
  FullMemberPart part;
  part.member = static_cast<int>(mi);
  part.sequential = specs.sequential;
  part.library_latency_s = specs.library_latency_s;
  for (const TierSpec& spec : specs.tiers) {
    FullTier tier;
    tier.extra_latency_s = extra_latency(spec.steps, spec.hop_latency_s);
    for (const Flow& f : spec.flows) {
      if (f.route == Route::nvlink) {
        if (l.nvl_next[mi] < 0) continue;  // alone in its domain: no NVLink peer
        tier.extra_latency_s += t.nvlink_latency_s;
        // SimGrid 3.32 never completes a 0-byte activity under wait_any: the latency alone.
        const std::uint64_t size = to_bytes(f.bytes);
        if (size > 0) tier.sends.push_back({Route::nvlink, -1, -1, static_cast<double>(size), f.rate_cap});
        continue;
      }
      const int peer = f.route == Route::leaf ? l.leaf_peer[mi] : l.spine_peer[mi];
      if (peer < 0) continue;  // a zero-byte flow of a tier this member does not use
      tier.sends.push_back({f.route, l.ranks[static_cast<std::size_t>(peer)], peer,
                            static_cast<double>(to_bytes(f.bytes)), f.rate_cap});
      (f.route == Route::leaf ? tier.incoming_leaf : tier.incoming_spine) +=
          f.route == Route::leaf ? l.leaf_in_count[mi] : l.spine_in_count[mi];
    }
    part.tiers.push_back(std::move(tier));
  }
  return part;
}

// NVLink bytes leave through the member's own port (Platform::start_nvlink_egress): no mailbox,
// so a member's NVLink tier ends when its own bytes are out; the engine's group barrier holds
// the members together where a collective needs every member's data.
void run_full(const Platform& p, const GroupLayout& l, const TierLoad& load, int self, std::string_view tag) {
  const FullMemberPart part = member_part(p, l, load, self);
  std::size_t incoming = 0;
  for (const FullTier& tier : part.tiers) incoming += static_cast<std::size_t>(tier.incoming_leaf + tier.incoming_spine);
  // Where incoming payload pointers land; sized up front so the slots never move.
  std::vector<void*> received(incoming, nullptr);
  std::size_t next_slot = 0;
  run_tiers(part.tiers.size(), part.sequential, part.library_latency_s, [&](std::size_t i, TierRun& run) {
    const FullTier& tier = part.tiers[i];
    run.extra_latency_s = tier.extra_latency_s;
    for (const FullTransfer& send : tier.sends)
      run.activities.push_back(
          send.route == Route::nvlink
              ? sg4::ActivityPtr(p.start_nvlink_egress(self, send.bytes, send.rate_cap))
              : sg4::ActivityPtr(put_async(mailbox(tag, send.route, send.to_rank), to_bytes(send.bytes), send.rate_cap)));
    for (const auto& [route, count] : {std::pair{Route::leaf, tier.incoming_leaf}, std::pair{Route::spine, tier.incoming_spine}}) {
      sg4::Mailbox* inbox = mailbox(tag, route, self);
      for (int k = 0; k < count; ++k) run.activities.push_back(inbox->get_async<void>(&received[next_slot++]));
    }
  });
}

void run_member(Platform& p, const GroupLayout& l, const TierLoad& load, bool send_recv, int self,
                std::string_view tag) {
  if (l.size <= 1) return;
  if (send_recv) {
    if (p.fidelity() == Fidelity::folded) send_folded(p, l, load, self);
    else send_full(l, load, p.topology(), self, tag);
    return;
  }
  if (p.fidelity() == Fidelity::folded) run_folded(p, l, load, self, tag);
  else run_full(p, l, load, self, tag);
}

}  // namespace

FullMemberPart full_member_part(const Platform& p, const Group& g, const TierLoad& load, int self) {
  if (p.fidelity() != Fidelity::full) throw std::logic_error("full_member_part: a full-fidelity platform only");
  return member_part(p, p.group_cache().get(p.topology(), g), load, self);
}

void run_load(Platform& p, const Group& g, const TierLoad& load, int self, std::string_view tag) {
  const GroupLayout& l = p.group_cache().get(p.topology(), g);
  run_member(p, l, load, false, self, tag);
}

void run_collective(Platform& p, CollectiveKind kind, const Group& g, double bytes, int self, std::string_view tag) {
  const GroupLayout& l = p.group_cache().get(p.topology(), g);
  if (kind == CollectiveKind::send_recv && l.size != 2)
    throw std::invalid_argument("send_recv: the group must be {sender, receiver}");
  if (l.size <= 1) return;
  const TierLoad load = plan_collective(p.topology(), kind, g, bytes, self).load;
  run_member(p, l, load, kind == CollectiveKind::send_recv, self, tag);
}

}  // namespace moesim::platform
