#pragma once
// Private to src/workload: one (micro-batch, chunk, pass) as a list of items, a compute run or a
// communication, before they are placed on streams.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/cost/section_cost.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/schedule.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::workload {

struct PassItem {
  bool is_comm = false;
  // compute
  cost::ComputeCost cost;
  // A compute item that must not delay the communication before it (delayed weight gradients):
  // it runs after that communication is issued and nothing waits for it but the stream.
  bool beside_previous_comm = false;
  // communication
  platform::CollectiveKind collective = platform::CollectiveKind::all_to_all;
  GroupRole group = GroupRole::ep;
  Activity activity = Activity::compute;
  double bytes = 0;
  double ep_tokens = 0;            // EP exchanges (see Task)
  double ep_token_bytes = 0;
  bool ep_combine_kernel = false;
  std::string label;
  int layer = -1;        // MoE layer of an expert segment or EP collective
  bool routed = false;   // compute on the tokens routed to this GPU's experts
  // Work per transformer block that runs beside the pass, on streams of its own, issued by the
  // pass but never a point of it: the block of the chunk the item belongs to (its index in
  // plan::sharded_blocks; -1 when there is no such work), and for a block's own tasks which they
  // are: per-block sharding (layout.sharding fsdp) gathers its parameters (before it runs, issued
  // one block ahead) and reduces its gradients (after its backward); activation offloading
  // (recipe.offload) copies its saved activations to host memory after its forward and back
  // before its backward (one block ahead). A block's first item waits for its gathers and reloads.
  enum class BlockTask : std::uint8_t { no, gather, reduce, offload, reload };
  BlockTask block_task = BlockTask::no;
  int block = -1;
  bool closed = false;   // no later compute joins this item (a block ends with it)
};

// What the step builder and the step estimate both need beyond the passes (step_costs.cpp).
// Seconds of a copy of `bytes` to or from host memory over the GPU's host link.
double host_copy_seconds(const Scenario& s, double bytes);
// Bytes of one PP message: a micro-batch's sequence-parallel hidden states (or gradients), BF16.
double pp_message_bytes(const Scenario& s, const plan::Layout& l);
// Bytes per parameter the distributed optimizer all-gathers (1 when gathered in FP8, else BF16).
double param_gather_bytes_per_param(const Scenario& s);
// Bytes per parameter Megatron's DDP reduce-scatters: the gradient buffer's type (FP32 main
// gradients unless recipe.main_grad_dtype is bf16).
double grad_reduce_bytes_per_param(const Scenario& s);
// The distributed Adam step of pipeline rank `pp_rank` (no dependencies set).
Task optimizer_task(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal, int pp_rank);

// Lowers passes of one pipeline rank's chunks. Costs of identical layers are computed once.
class PassLowering {
 public:
  PassLowering(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal);
  // A backward pass is lowered whole, as its input-gradient part (B: the data-gradient GEMMs and
  // everything that is not a weight GEMM, with its communication) or as its weight-gradient part
  // (W: the weight-gradient GEMMs, compute only).
  std::vector<PassItem> lower(int pp_rank, int chunk, plan::Pass pass) const;

 private:
  void layer_forward(int layer, bool moe, std::vector<PassItem>& out) const;
  // part: all (whole backward) or data_only (B).
  void layer_backward(int layer, bool moe, cost::GradPart part, std::vector<PassItem>& out) const;
  void layer_weight_grad(bool moe, std::vector<PassItem>& out) const;
  // Tags the items of each block and places the work beside the pass: its gathers and reductions
  // (layout.sharding fsdp) and its activations' copies to host memory and back (recipe.offload).
  class Blocks;
  void mtp_forward(std::vector<PassItem>& out) const;
  void mtp_backward(cost::GradPart part, std::vector<PassItem>& out) const;
  void compute(std::vector<PassItem>& out, const model::Section& sec, bool forward,
               const std::string& label, cost::GradPart part = cost::GradPart::all,
               bool beside = false) const;
  // The experts of MoE layer `layer`: compute on the tokens routed to this GPU, kept apart.
  void experts(std::vector<PassItem>& out, const model::Section& sec, bool forward, int layer,
               const std::string& label, cost::GradPart part = cost::GradPart::all,
               bool beside = false) const;
  void comm(std::vector<PassItem>& out, platform::CollectiveKind kind, GroupRole group,
            Activity activity, double bytes, const std::string& label, int layer = -1) const;
  // An EP exchange of `p`'s tokens in MoE layer `layer`, one copy of `token_bytes` each, by the
  // dispatch or the combine kernel.
  void ep_exchange(std::vector<PassItem>& out, const model::LayerProgram& p, Activity activity, double token_bytes,
                   bool combine_kernel, const std::string& label, int layer) const;

  const Scenario& s_;
  const plan::Layout& l_;
  const cost::KernelCalibration& cal_;
  model::Shard shard_;
  model::LayerProgram moe_, dense_;
  model::Section embedding_, output_, mtp_extra_;
  // Activations one micro-batch's MoE (dense) layer keeps in host memory (recipe.offload).
  double moe_offload_bytes_ = 0, dense_offload_bytes_ = 0;
};

}  // namespace moesim::workload
