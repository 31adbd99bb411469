#include "nic_transfers.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace moesim::engine {

namespace sg4 = simgrid::s4u;

NicTransfers::NicTransfers(const platform::Platform& platform, const std::vector<Gpu>& gpus)
    : platform_(platform), gpus_(gpus), agents_(gpus.size()) {}

NicTransfers::~NicTransfers() {
  for (const sg4::ActivityPtr& a : in_flight_) a->cancel();
  for (int id : posting_)
    if (slots_[static_cast<std::size_t>(id)].comm) slots_[static_cast<std::size_t>(id)].comm->cancel();
}

void NicTransfers::start(int id, int from, int to, double bytes, double rate_cap) {
  const auto slot = static_cast<std::size_t>(id);
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  slots_[slot] = Slot{nullptr, nullptr, true, ++serial_, bytes, rate_cap};
  if (rate_cap > 0) {
    posting_.push_back(id);
    ask(to, false, id);
    ask(from, true, id);
  } else {
    slots_[slot].comm = sg4::Comm::sendto_async(platform_.host(gpus_[static_cast<std::size_t>(from)].rank),
                                                platform_.host(gpus_[static_cast<std::size_t>(to)].rank),
                                                static_cast<std::uint64_t>(bytes));
    in_flight_.push_back(slots_[slot].comm);
    in_flight_ids_.push_back(id);
  }
  const platform::Topology& topo = platform_.topology();
  const double nic = topo.nic_bytes_per_s * topo.nic_speed_of(gpus_[static_cast<std::size_t>(from)].rank);
  const double fastest = rate_cap > 0 ? std::min(rate_cap, nic) : nic;
  // Its bytes at the sender NIC's rate and the latency of both NICs, less a margin for rounding.
  const double earliest = sg4::Engine::get_clock() + (bytes / fastest + 2 * topo.nic_latency_s) * (1 - 1e-9);
  earliest_end_.push({earliest, slot, serial_});
}

double NicTransfers::safe_until() {
  while (!earliest_end_.empty()) {
    const EarliestEnd& e = earliest_end_.top();
    const Slot& s = slots_[e.slot];
    if (s.active && s.serial == e.serial) return e.t;
    earliest_end_.pop();
  }
  return std::numeric_limits<double>::infinity();
}

int NicTransfers::wait_next(double timeout_s) {
  flush_agents();
  const ssize_t index = sg4::Activity::wait_any_for(in_flight_, timeout_s);
  if (index < 0) return -1;
  const auto i = static_cast<std::size_t>(index);
  const int id = in_flight_ids_[i];
  in_flight_[i] = in_flight_.back();
  in_flight_.pop_back();
  in_flight_ids_[i] = in_flight_ids_.back();
  in_flight_ids_.pop_back();
  Slot& done = slots_[static_cast<std::size_t>(id)];
  done.comm = nullptr;
  done.receive = nullptr;
  done.active = false;
  return id;
}

// Asks the agent of `gpu` to post a half of transfer `id`: the request goes in first, since
// waking the agent is a simcall during which it may run.
void NicTransfers::ask(int gpu, bool send, int id) {
  Agent& a = agents_[static_cast<std::size_t>(gpu)];
  (send ? a.sends : a.receives).push_back(id);
  ++requested_;
  if (!a.actor) {
    a.wake_up = sg4::Semaphore::create(0);
    a.actor = sg4::Actor::create("nic-agent-" + std::to_string(gpus_[static_cast<std::size_t>(gpu)].rank),
                                 platform_.host(gpus_[static_cast<std::size_t>(gpu)].rank),
                                 [this, gpu, wake_up = a.wake_up]() { agent_loop(gpu, *wake_up); });
    a.actor->daemonize();
  } else if (a.asleep) {
    a.asleep = false;
    a.wake_up->release();
  }
}

// Every post is a simcall, during which the event core (or another agent) may run and grow any
// vector here: the agent keeps no reference into them across one. It owns its semaphore (SimGrid
// refuses to destroy one an actor waits on).
void NicTransfers::agent_loop(int gpu, sg4::Semaphore& wake_up) {
  Agent& a = agents_[static_cast<std::size_t>(gpu)];
  std::vector<int> receives, sends;
  while (true) {
    while (!a.receives.empty() || !a.sends.empty()) {
      receives.swap(a.receives);
      sends.swap(a.sends);
      for (int id : receives) {
        sg4::CommPtr c = mailbox(id)->get_async<void>(&received_);
        slots_[static_cast<std::size_t>(id)].receive = std::move(c);
        ++posted_;
      }
      for (int id : sends) {
        const auto bytes = static_cast<std::uint64_t>(slots_[static_cast<std::size_t>(id)].bytes);
        const double rate_cap = slots_[static_cast<std::size_t>(id)].rate_cap;
        sg4::CommPtr c = mailbox(id)->put_init(&payload_, bytes);
        c->set_rate(rate_cap);
        c->start();
        slots_[static_cast<std::size_t>(id)].comm = std::move(c);
        ++posted_;
      }
      receives.clear();
      sends.clear();
    }
    a.asleep = true;
    wake_up.acquire();
    if (stopping_) return;
  }
}

sg4::Mailbox* NicTransfers::mailbox(int id) {
  const auto slot = static_cast<std::size_t>(id);
  if (slot < mailboxes_.size() && mailboxes_[slot] != nullptr) return mailboxes_[slot];
  sg4::Mailbox* box = sg4::Mailbox::by_name("event-core/" + std::to_string(id));  // a simcall
  if (mailboxes_.size() <= slot) mailboxes_.resize(slot + 1, nullptr);
  mailboxes_[slot] = box;
  return box;
}

// Lets the agents asked to post run (at this date), then waits on what they posted.
void NicTransfers::flush_agents() {
  if (posting_.empty()) return;
  while (posted_ < requested_) sg4::this_actor::yield();
  for (int id : posting_) {
    in_flight_.push_back(slots_[static_cast<std::size_t>(id)].comm);
    in_flight_ids_.push_back(id);
  }
  posting_.clear();
}

void NicTransfers::stop() {
  stopping_ = true;
  for (Agent& a : agents_)
    if (a.actor && a.asleep) {
      a.asleep = false;
      a.wake_up->release();
    }
  sg4::this_actor::yield();
}

}  // namespace moesim::engine
