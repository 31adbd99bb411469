#pragma once
// The parallel layout: sizes of every parallel dimension, the pipeline's virtual stages, and
// Megatron's default rank order ("tp-cp-ep-dp-pp": tensor parallel fastest, pipeline slowest).
// Dense modules use (tp, cp, dp, pp); experts use (etp, ep, edp, pp) over the same ranks.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::plan {

// One virtual pipeline stage (a model chunk): what it holds, in Megatron's layout alphabet
// (E embedding, t transformer layer, m MTP layer, L loss/output head).
struct VirtualStage {
  int pp_rank = 0;
  int chunk = 0;            // virtual stage index on its pp rank
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

struct Layout {
  int world = 0;
  int tp = 1, cp = 1, pp = 1, vpp = 1, dp = 1;
  int ep = 1, etp = 1, edp = 1;
  int micro_batch = 1;
  int microbatches = 1;     // per pipeline per step: global_batch / (micro_batch * dp)
  bool interleaved = false;
  std::string pipeline_layout;          // as given, or the generated one
  bool pipeline_layout_generated = false;
  std::vector<VirtualStage> stages;     // pp * vpp, index = chunk * pp + pp_rank

  RankCoord coord(int rank) const;
  int dense_rank(int tp, int cp, int dp, int pp) const;
  int expert_rank(int etp, int ep, int edp, int pp) const;
  const VirtualStage& stage(int pp_rank, int chunk) const { return stages[chunk * pp + pp_rank]; }

  // Groups containing `rank`, in group order (global ranks).
  std::vector<int> tp_group(int rank) const;
  std::vector<int> cp_group(int rank) const;
  std::vector<int> dp_group(int rank) const;    // dense gradients: dp x cp ranks
  std::vector<int> ep_group(int rank) const;
  std::vector<int> edp_group(int rank) const;   // expert gradients
  std::vector<int> pp_group(int rank) const;
};

// Validates the layout against the scenario and builds it. Throws InfeasibleError listing
// every rule that fails, each with the numbers involved and what would make it valid.
Layout make_layout(const Scenario& s);

// Megatron's pipeline_model_parallel_layout: "Et*3|(tt|)*29m|L" style; returns the virtual
// stages' contents, one string per stage ("Et", "tt", ..., "mL").
std::vector<std::string> expand_pipeline_layout(const std::string& layout);

}  // namespace moesim::plan
