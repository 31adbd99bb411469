#include "moesim/engine/flow_network.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace moesim::engine {

int FlowNetwork::add_link(double bytes_per_s) {
  if (!(bytes_per_s > 0)) throw std::invalid_argument("FlowNetwork: a link needs a positive capacity");
  Link link;
  link.capacity = bytes_per_s;
  links_.push_back(std::move(link));
  feeders_of_.emplace_back();
  link_room_.push_back(0);
  link_weight_.push_back(0);
  link_unfixed_.push_back(0);
  return static_cast<int>(links_.size() - 1);
}

int FlowNetwork::add_route(std::span<const int> links, double latency_s) {
  if (links.empty()) throw std::invalid_argument("FlowNetwork: a route needs a link");
  if (links.size() > kMaxRouteLinks)
    throw std::invalid_argument("FlowNetwork: a route of " + std::to_string(links.size()) + " links (at most " +
                                std::to_string(kMaxRouteLinks) + ")");
  Route r{.latency_s = latency_s, .size = static_cast<std::uint32_t>(links.size())};
  std::copy(links.begin(), links.end(), r.links.begin());
  const int sender = links.front(), receiver = links.back();
  for (int l : links) {
    Link& link = links_.at(static_cast<std::size_t>(l));
    LinkFeeders& feeders = feeders_of_[static_cast<std::size_t>(l)];
    r.slowest_link = std::min(r.slowest_link, link.capacity);
    if (l == sender) feeders.first_of_a_route = true;
    else if (new_feeder(l, sender, true)) feeders.senders_capacity += links_[static_cast<std::size_t>(sender)].capacity;
    if (l == receiver) feeders.last_of_a_route = true;
    else if (new_feeder(l, receiver, false)) feeders.receivers_capacity += links_[static_cast<std::size_t>(receiver)].capacity;
    link.feeders_bound = std::min(feeders.first_of_a_route ? kNever : feeders.senders_capacity,
                                  feeders.last_of_a_route ? kNever : feeders.receivers_capacity);
  }
  routes_.push_back(r);
  return static_cast<int>(routes_.size() - 1);
}

bool FlowNetwork::new_feeder(int link, int nic, bool sender) {
  const std::uint64_t key = (static_cast<std::uint64_t>(link) << 33) | (static_cast<std::uint64_t>(nic) << 1) | (sender ? 1 : 0);
  return feeders_.insert(key).second;
}

void FlowNetwork::start(int id, int route, double bytes, double rate_cap, double now_s) {
  if (id < 0 || !(bytes > 0)) throw std::invalid_argument("FlowNetwork: a flow needs an id and bytes");
  const auto slot = static_cast<std::size_t>(id);
  if (flows_.size() <= slot) flows_.resize(slot + 1);
  Flow& f = flows_[slot];
  if (f.active) throw std::logic_error("FlowNetwork: flow " + std::to_string(id) + " is already in flight");
  const Route& r = routes_.at(static_cast<std::size_t>(route));
  f.route = route;
  f.active = true;
  f.sharing = false;
  f.remaining = bytes;
  f.updated_s = now_s;
  f.rate = 0;
  f.bound = rate_cap > 0 ? std::min(rate_cap, r.slowest_link) : r.slowest_link;
  // SimGrid's CM02 weighs a flow by its route's latency (1 without one).
  f.weight = r.latency_s > 0 ? 1 / r.latency_s : 1;
  ++f.version;  // kept across the slot's uses: an earlier flow's due dates stay stale
  ++in_flight_;
  if (r.latency_s > 0) {
    due_.push({now_s + r.latency_s, id, f.version});
    return;
  }
  share(id, now_s);
  resolve(now_s);
}

double FlowNetwork::next_event_s() {
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Flow& f = flows_[static_cast<std::size_t>(d.flow)];
    if (f.active && f.version == d.version) return d.t;
    due_.pop();
  }
  return kNever;
}

void FlowNetwork::advance(double now_s, std::vector<int>& ended) {
  // Date by date: the shares change at each.
  for (double t = next_event_s(); t <= now_s; t = next_event_s()) {
    while (next_event_s() == t) {
      const int id = due_.top().flow;
      due_.pop();
      Flow& f = flows_[static_cast<std::size_t>(id)];
      if (!f.sharing) {
        share(id, t);
        continue;
      }
      unshare(id);
      f.active = false;
      f.sharing = false;
      f.rate = 0;
      ++f.version;
      --in_flight_;
      ended.push_back(id);
    }
    resolve(t);
  }
}

// What the link's flows could carry at most exceeds its capacity: by their bounds, and by the
// NICs that feed it (every flow through it crosses one, which carries at most its capacity).
bool FlowNetwork::may_saturate(const Link& l) const {
  return std::min(l.sum_of_bounds, l.feeders_bound) > l.capacity;
}

void FlowNetwork::share(int id, double now_s) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const Route& r = routes_[static_cast<std::size_t>(f.route)];
  f.sharing = true;
  f.updated_s = now_s;
  for (std::size_t i = 0; i < r.size; ++i) {
    Link& l = links_[static_cast<std::size_t>(r.links[i])];
    f.position[i] = static_cast<int>(l.flows.size());
    l.flows.push_back(id);
    l.sum_of_bounds += f.bound;
  }
  seeds_.push_back(id);
}

// Leaves its links; the flows of those that could have bound it may now run faster.
void FlowNetwork::unshare(int id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const Route& r = routes_[static_cast<std::size_t>(f.route)];
  for (std::size_t i = 0; i < r.size; ++i) {
    const int link = r.links[i];
    Link& l = links_[static_cast<std::size_t>(link)];
    const bool could_bind = may_saturate(l);
    const auto at = static_cast<std::size_t>(f.position[i]);
    const int moved = l.flows.back();
    l.flows[at] = moved;
    l.flows.pop_back();
    if (moved != id) {
      Flow& m = flows_[static_cast<std::size_t>(moved)];
      const Route& mr = routes_[static_cast<std::size_t>(m.route)];
      for (std::size_t k = 0; k < mr.size; ++k)
        if (mr.links[k] == link) m.position[k] = static_cast<int>(at);
    }
    l.sum_of_bounds = l.flows.empty() ? 0 : l.sum_of_bounds - f.bound;
    if (could_bind) seeds_.insert(seeds_.end(), l.flows.begin(), l.flows.end());
  }
}

// Max-min with weights and bounds over the flows reached from the seeds through links that may
// saturate, as SimGrid's lmm solver does it: the link whose room per unit of weight is least
// fixes its flows at that share times their weight, unless a flow's bound comes first.
void FlowNetwork::resolve(double now_s) {
  ++mark_;
  component_.clear();
  component_links_.clear();
  for (int s : seeds_) {
    Flow& f = flows_[static_cast<std::size_t>(s)];
    if (!f.active || !f.sharing || f.mark == mark_) continue;
    f.mark = mark_;
    component_.push_back(s);
  }
  seeds_.clear();
  for (std::size_t next = 0; next < component_.size(); ++next) {
    const Route& r = routes_[static_cast<std::size_t>(flows_[static_cast<std::size_t>(component_[next])].route)];
    for (int link : r.hops()) {
      Link& l = links_[static_cast<std::size_t>(link)];
      if (l.mark == mark_ || !may_saturate(l)) continue;
      l.mark = mark_;
      component_links_.push_back(link);
      for (int g : l.flows) {
        Flow& other = flows_[static_cast<std::size_t>(g)];
        if (other.mark == mark_) continue;
        other.mark = mark_;
        component_.push_back(g);
      }
    }
  }

  for (int link : component_links_) {
    const auto k = static_cast<std::size_t>(link);
    link_room_[k] = links_[k].capacity;
    link_weight_[k] = 0;
    for (int g : links_[k].flows) link_weight_[k] += flows_[static_cast<std::size_t>(g)].weight;
    link_unfixed_[k] = static_cast<int>(links_[k].flows.size());
  }
  for (int id : component_) flows_[static_cast<std::size_t>(id)].fixed = false;

  const auto fix = [&](int id, double rate) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    f.fixed = true;
    for (int link : routes_[static_cast<std::size_t>(f.route)].hops()) {
      const auto k = static_cast<std::size_t>(link);
      if (links_[k].mark != mark_) continue;
      link_room_[k] -= rate;
      link_weight_[k] -= f.weight;
      --link_unfixed_[k];
    }
    set_rate(id, rate, now_s);
  };
  constexpr double kTie = 1 + 1e-12;
  std::size_t unfixed = component_.size();
  while (unfixed > 0) {
    double by_link = kNever;
    for (int link : component_links_) {
      const auto k = static_cast<std::size_t>(link);
      if (link_unfixed_[k] > 0) by_link = std::min(by_link, std::max(0.0, link_room_[k]) / link_weight_[k]);
    }
    double by_bound = kNever;
    for (int id : component_) {
      const Flow& f = flows_[static_cast<std::size_t>(id)];
      if (!f.fixed) by_bound = std::min(by_bound, f.bound / f.weight);
    }
    if (by_bound <= by_link) {
      for (int id : component_) {
        const Flow& f = flows_[static_cast<std::size_t>(id)];
        if (!f.fixed && f.bound / f.weight <= by_bound * kTie) {
          fix(id, f.bound);
          --unfixed;
        }
      }
      continue;
    }
    for (int link : component_links_) {
      const auto k = static_cast<std::size_t>(link);
      if (link_unfixed_[k] <= 0 || std::max(0.0, link_room_[k]) / link_weight_[k] > by_link * kTie) continue;
      for (int id : links_[k].flows) {
        const Flow& f = flows_[static_cast<std::size_t>(id)];
        if (f.fixed) continue;
        fix(id, by_link * f.weight);
        --unfixed;
      }
    }
  }
}

void FlowNetwork::set_rate(int id, double rate, double now_s) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.rate == rate) return;
  f.remaining = std::max(0.0, f.remaining - f.rate * (now_s - f.updated_s));
  f.updated_s = now_s;
  f.rate = rate;
  ++f.version;
  if (rate > 0) due_.push({now_s + f.remaining / rate, id, f.version});
}

}  // namespace moesim::engine
