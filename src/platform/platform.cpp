#include "moesim/platform/platform.hpp"

#include <stdexcept>
#include <string>
#include <unordered_set>

#include "group_layout.hpp"

namespace moesim::platform {

std::unique_ptr<Platform> Platform::build(const Topology& topology, Fidelity fidelity, const std::vector<int>& ranks) {
  if (topology.gpus <= 0 || topology.gpus_per_domain <= 0)
    throw std::invalid_argument("Platform::build: topology needs gpus > 0 and gpus_per_domain > 0");
  if (topology.nvlink_bytes_per_s <= 0 || topology.nic_bytes_per_s <= 0 || topology.gpu_flop_per_s <= 0)
    throw std::invalid_argument("Platform::build: topology needs positive NVLink, NIC and GPU speeds");
  check_topology(topology);  // nothing SimGrid would abort on ("The Impossible Did Happen")
  std::unique_ptr<Platform> p(new Platform(topology, fidelity));
  if (fidelity == Fidelity::full)
    p->build_full();
  else
    p->build_folded(ranks);
  return p;
}

bool Platform::has_host(int rank) const {
  return rank >= 0 && rank < static_cast<int>(hosts_.size()) && hosts_[static_cast<std::size_t>(rank)] != nullptr;
}

simgrid::s4u::Host* Platform::host(int rank) const {
  if (!has_host(rank)) throw std::out_of_range("Platform: rank " + std::to_string(rank) + " has no host");
  return hosts_[static_cast<std::size_t>(rank)];
}

namespace {
simgrid::s4u::Host* mirror(const std::vector<simgrid::s4u::Host*>& mirrors, Fidelity f, int rank, const char* what) {
  if (f != Fidelity::folded) throw std::logic_error(std::string("Platform: ") + what + " exists in folded mode only");
  if (rank < 0 || rank >= static_cast<int>(mirrors.size()) || mirrors[static_cast<std::size_t>(rank)] == nullptr)
    throw std::out_of_range(std::string("Platform: rank ") + std::to_string(rank) + " has no " + what);
  return mirrors[static_cast<std::size_t>(rank)];
}
}  // namespace

simgrid::s4u::Host* Platform::nvlink_mirror(int rank) const {
  return mirror(nvlink_mirror_, fidelity_, rank, "nvlink_mirror");
}

simgrid::s4u::Host* Platform::leaf_mirror(int rank) const { return mirror(leaf_mirror_, fidelity_, rank, "leaf_mirror"); }

simgrid::s4u::Host* Platform::scaleout_mirror(int rank) const {
  return mirror(scaleout_mirror_, fidelity_, rank, "scaleout_mirror");
}

simgrid::s4u::Mailbox* Platform::mirror_mailbox(int rank, int tier, std::string_view tag) const {
  namespace sg4 = simgrid::s4u;
  sg4::Host* mirror_host = tier == 0 ? nvlink_mirror(rank) : tier == 1 ? leaf_mirror(rank) : scaleout_mirror(rank);
  static const char* const tiers[] = {"/nvl/", "/leaf/", "/spine/"};
  std::string name = "mirror/";
  name.append(tag).append(tiers[tier == 0 ? 0 : tier == 1 ? 1 : 2]).append(std::to_string(rank));
  sg4::Mailbox* box = sg4::Mailbox::by_name(name);
  if (!sinks_) sinks_ = std::make_shared<std::unordered_set<std::string>>();
  auto& sinks = *std::static_pointer_cast<std::unordered_set<std::string>>(sinks_);
  if (sinks.insert(name).second) {
    sg4::Actor::create(name + "/sink", mirror_host, [box] {
      sg4::Actor::self()->daemonize();
      for (;;) box->get<char>();
    });
  }
  return box;
}

simgrid::s4u::ExecPtr Platform::start_nvlink_egress(int rank, double bytes, double rate_cap) const {
  if (fidelity_ != Fidelity::full) throw std::logic_error("Platform: start_nvlink_egress exists in full mode only");
  host(rank);  // throws for a rank outside the platform
  auto exec = simgrid::s4u::Exec::init()->set_flops_amount(bytes)->set_host(nvlink_ports_[static_cast<std::size_t>(rank)]);
  if (rate_cap > 0) exec->set_bound(rate_cap);
  exec->start();
  return exec;
}

Platform::GroupCache& Platform::group_cache() const {
  if (!group_cache_) group_cache_ = std::make_shared<GroupCache>();
  return *group_cache_;
}

}  // namespace moesim::platform
