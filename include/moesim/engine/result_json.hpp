#pragma once
// JSON of a stage's breakdown and traffic, one key per member under the member's own name: the
// wire between the simulating child and the parent and the run report both use it.
#include <nlohmann/json.hpp>

#include "moesim/engine/simulate.hpp"

namespace moesim::engine {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Breakdown, compute_s, recompute_s, host_overhead_s, optimizer_s, exposed_tp_s,
                                   exposed_ep_dispatch_s, exposed_ep_combine_s, exposed_pp_s, exposed_dp_s, bubble_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Traffic, ep_nvlink_bytes, ep_nic_bytes, other_nvlink_bytes, other_nic_bytes,
                                   ep_copies_per_token, ep_domains_per_token)

}  // namespace moesim::engine
