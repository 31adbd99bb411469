#include "moesim/platform/platform.hpp"

#include <stdexcept>
#include <string>

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

simgrid::s4u::Host* Platform::scaleout_mirror(int rank) const {
  return mirror(scaleout_mirror_, fidelity_, rank, "scaleout_mirror");
}

Platform::GroupCache& Platform::group_cache() const {
  if (!group_cache_) group_cache_ = std::make_shared<GroupCache>();
  return *group_cache_;
}

}  // namespace moesim::platform
