#pragma once
// EP dispatchers as they move tokens (dispatch: tokens to their experts; combine: expert outputs
// back, the reverse path). Each gives a plan of the same shape as a collective's (TierLoad), so
// both fidelities run it like any other.
//
//  - NCCL all-to-all (Megatron's alltoall dispatcher): one copy per (token, expert) pair; with
//    balanced routing every peer gets tokens * top_k / ep copies (the rank's own stay local).
//  - DeepEP and HybridEP (flex dispatcher), inside one NVLink domain: one copy per (token,
//    destination GPU), D_gpu per token (model/routing.hpp), NVLink only.
//  - DeepEP and HybridEP across domains (DeepEP internode, HybridEP's cross-domain mode): one
//    RDMA copy per (token, destination domain) to the GPU of the same local index there (D_node
//    per token, the own domain's copy stays local), then NVLink forwarding to the destination
//    GPUs of that domain (D_gpu copies per token, of which 1/k land on the forwarder itself).
//    The combine runs the same path backwards (NVLink to the forwarder, which reduces, then one
//    RDMA copy per (token, domain)).
// Rates: the dispatcher's kernels reach a measured fraction of the NVLink port, unless their SMs
// bind first (sms x the bytes one SM moves per second, measured where the link does not bind; across
// domains, the forwarding kernel's own per-SM rate where one is measured),
// and a measured fraction of the NIC for RDMA (the stack's dispatcher parameters). NCCL's
// all-to-all is NCCL's point-to-point plan (nccl.hpp).
#include <string_view>

#include "moesim/model/routing.hpp"
#include "moesim/platform/collective.hpp"

namespace moesim::platform {

enum class EpDispatcher { nccl_alltoall, deepep, hybridep };
// "alltoall", "deepep" or "hybridep" (the recipe's names); throws std::invalid_argument otherwise.
EpDispatcher ep_dispatcher(std::string_view name);
std::string_view to_string(EpDispatcher d);

enum class EpKernel { dispatch, combine };

// What one kernel of a deduplicating dispatcher reaches.
struct EpKernelRates {
  double nvlink_efficiency = 1.0;  // fraction of the NVLink port when the link binds
  // NVLink bytes one of its SMs moves per second; 0 = SMs never bind. Inside one NVLink domain a
  // per-copy law (sm_copy_seconds_per_peer), where given, is the SM limit instead of it.
  double sm_bytes_per_s = 0;
  double rdma_efficiency = 1.0;    // fraction of the NIC (its spine share) for RDMA copies
  // SM time of each copy the kernel issues, per NVLink peer (HybridEP: its store and load threads
  // issue one TMA copy per token, probability row and scale block, and each costs more the more
  // peers the kernel writes to); 0 = not modelled.
  double sm_copy_seconds_per_peer = 0;
  // NVLink bytes one of its SMs forwards per second across domains, where another kernel runs:
  // RDMA senders and NVLink forwarders, whose warps copy one token at a time and bind below the
  // link (DeepEP internode); 0 = not modelled.
  double forward_sm_bytes_per_s = 0;
};
struct EpDispatcherRates {
  EpKernelRates dispatch, combine;
};

struct EpExchangeRequest {
  EpDispatcher dispatcher = EpDispatcher::nccl_alltoall;
  EpKernel kernel = EpKernel::dispatch;
  double tokens = 0;         // tokens each rank routes
  double token_bytes = 0;    // bytes of one token copy (hidden x element size, scales included)
  int hidden = 0;            // elements per token: under 2 bytes each, the token is FP8 with scales
  bool probabilities = false;  // each copy carries its token's probability row (HybridEP sends it)
  model::RoutingShape routing;
  int sms = 0;               // SMs the dispatcher's kernels run on (deepep, hybridep)
  EpDispatcherRates rates;   // deepep, hybridep
};

struct EpExchangePlan {
  TierLoad load;                     // the member's
  bool two_hop = false;              // RDMA to each destination domain, then NVLink forwarding
  double copies_per_token = 0;       // top_k (alltoall) or distinct destination GPUs
  double domains_per_token = 0;      // distinct destination domains, the own one included
  double logical_nvlink_bytes = 0;   // DeepEP's "NVL" count: token copies received, own included
  double logical_rdma_bytes = 0;     // DeepEP's "RDMA" count: (token, domain) pairs, own included
  int channels = 0;                  // NCCL's CTAs (alltoall); the dispatchers' SMs are the recipe's
  double seconds = 0;                // on an idle platform
};

// The request a run's EP exchanges share: the recipe's dispatcher and SMs, the stack's measured
// rates for it, the model's routing. Tokens, token bytes and kernel are per exchange.
EpExchangeRequest ep_exchange_request(const RecipeSpec& recipe, const StackSpec& stack, const ModelSpec& model);
// One exchange of a run: its shared request with this exchange's kernel, tokens, token bytes and
// whether its copies carry the router's probabilities (workload::ep_carries_probabilities).
EpExchangeRequest one_exchange(EpExchangeRequest shared, EpKernel kernel, double tokens, double token_bytes,
                               bool probabilities);

// The plan of member `rank` of the EP group. Throws std::invalid_argument for a rank outside the
// group, negative sizes, or a routing whose experts do not divide over the group.
EpExchangePlan plan_ep_exchange(const Topology& t, const Group& ep_group, const EpExchangeRequest& r, int rank);

// The plan a folded representative runs for its EP group: its own (plan_ep_exchange) when the
// group's NVLink domains hold equal numbers of members; else the busiest member's, the one whose
// exchange takes longest on an idle platform (the members of a small domain receive more RDMA
// copies than they send): the exchange ends when its slowest member does, which the full
// fidelity waits for and the folded one, simulating one member, would otherwise miss.
EpExchangePlan plan_ep_exchange_folded(const Topology& t, const Group& ep_group, const EpExchangeRequest& r, int rank);

}  // namespace moesim::platform
