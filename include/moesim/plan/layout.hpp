#pragma once
// The parallel layout: sizes of every parallel dimension, the pipeline's virtual stages, and
// Megatron's default rank order ("tp-cp-ep-dp-pp": tensor parallel fastest, pipeline slowest).
// Dense modules use (tp, cp, dp, pp); experts use (etp, ep, edp, pp) over the same ranks.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/plan/schedule.hpp"

namespace moesim::plan {

// One virtual pipeline stage (a model chunk): what it holds, in Megatron's layout alphabet
// (E embedding, t transformer layer, m MTP layer, L loss/output head).
struct VirtualStage {
  int pp_rank = 0;          // where it sits (dualpipe: for micro-batches entering at rank 0)
  int chunk = 0;            // model chunk index on that pp rank
  int first_layer = 0;      // index of its first transformer layer
  int layers = 0;           // transformer layers it holds
  bool embedding = false;
  bool output = false;      // final norm, logits and loss
  int mtp_layers = 0;
};

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;  // dense view
  int etp = 0, ep = 0, edp = 0;        // expert view
};

// Where a virtual stage runs for a given micro-batch.
struct StageHolder {
  int pp_rank = 0;
  int chunk = 0;
};

struct Layout {
  int world = 0;
  int tp = 1, cp = 1, pp = 1, vpp = 1, dp = 1;
  int ep = 1, etp = 1, edp = 1;
  int micro_batch = 1;
  int microbatches = 1;     // per pipeline per step: global_batch / (micro_batch * dp)
  Schedule schedule = Schedule::one_f_one_b;
  bool interleaved = false;             // Megatron's interleaved 1F1B (1f1b with vpp > 1)
  bool combined_1f1b = false;           // 1f1b with recipe.ep_overlap: F&B pairs after one extra warm-up forward
  int chunks = 1;                       // model chunks held per pipeline rank: vpp, 2 for dualpipe
  int param_copies = 1;                 // pipeline ranks holding each stage's parameters: 2 for dualpipe
  // ZeRO-3 sharding (layout.sharding "fsdp"): parameters gathered per transformer block and pass,
  // gradients reduced per block, instead of once per step by the distributed optimizer.
  bool fsdp = false;
  bool reshard_after_forward = true;    // fsdp: the backward gathers each block again
  int dp_replicate = 1;                 // fsdp: replicas of each shard (HSDP); 1 = fully sharded
  std::string pipeline_layout;          // as given, or the generated one
  bool pipeline_layout_generated = false;
  std::vector<VirtualStage> stages;     // pp * vpp, in model order (index = virtual stage)

  RankCoord coord(int rank) const;
  int dense_rank(int tp, int cp, int dp, int pp) const;
  int expert_rank(int etp, int ep, int edp, int pp) const;

  int virtual_stages() const { return pp * vpp; }
  // The virtual stage that chunk `chunk` of pipeline rank `pp_rank` holds: chunk * pp + pp_rank
  // (interleaved); pp_rank or 2 pp - 1 - pp_rank (V-shaped zb-v, dualpipev); pp_rank or
  // pp - 1 - pp_rank (dualpipe, one stage per direction).
  int stage_index(int pp_rank, int chunk) const;
  const VirtualStage& stage(int pp_rank, int chunk) const { return stages[stage_index(pp_rank, chunk)]; }
  // Dualpipe feeds the first half of the micro-batches in at pipeline rank 0 (direction 0) and
  // the second half in at the last rank (direction 1); every other schedule has direction 0.
  int direction(int microbatch) const;
  StageHolder holder(int stage, int microbatch) const;
  // The other pipeline rank holding copies of the same stages (dualpipe), else pp_rank itself.
  int mirror_pp_rank(int pp_rank) const;
  // The pipeline ranks holding pp_rank's parameters, ascending (two under dualpipe).
  std::vector<int> copy_holders(int pp_rank) const;

  // Groups containing `rank`, in group order (global ranks).
  std::vector<int> tp_group(int rank) const;
  std::vector<int> cp_group(int rank) const;
  // Dense gradients: dp x cp ranks, on both pipeline ranks holding the parameters (dualpipe).
  std::vector<int> dp_group(int rank) const;
  std::vector<int> ep_group(int rank) const;
  std::vector<int> edp_group(int rank) const;   // expert gradients, likewise
  std::vector<int> pp_group(int rank) const;
  // HSDP: the part of dp_group (edp_group) a block is sharded over, and the replicas of this
  // rank's shard (dp_replicate ranks). Without replicas: dp_group (edp_group) and this rank.
  std::vector<int> dp_shard_group(int rank) const;
  std::vector<int> dp_replicate_group(int rank) const;
  std::vector<int> edp_shard_group(int rank) const;
  std::vector<int> edp_replicate_group(int rank) const;
  // The ranks a parameter's optimizer state is sharded over: dense, experts.
  int dense_shards() const { return dp * cp / dp_replicate; }
  int expert_shards() const { return edp / dp_replicate; }
};

// Validates the layout against the scenario and builds it. Throws InfeasibleError listing
// every rule that fails, each with the numbers involved and what would make it valid.
Layout make_layout(const Scenario& s);

// Megatron's pipeline_model_parallel_layout: "Et*3|(tt|)*29m|L" style; returns the virtual
// stages' contents, one string per stage ("Et", "tt", ..., "mL").
std::vector<std::string> expand_pipeline_layout(const std::string& layout);

}  // namespace moesim::plan
