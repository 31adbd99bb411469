// Layout validation and Megatron's rank order.
#include "moesim/plan/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moesim/config/error.hpp"
#include "moesim/model/flops.hpp"
#include "moesim/model/params.hpp"

namespace moesim::plan {

namespace {

// Megatron needs an explicit layout whenever the layers do not split evenly; we generate one
// that balances the stages' work. Weights are Megatron-convention FLOPs per token, with the
// output head counted at twice its FLOPs when the run's GEMMs are FP8 (the head stays BF16, so
// it runs at half the rate). MTP layers and the loss must sit on the last stage.
std::string generate_layout(const ModelSpec& m, const TrainingSpec& tr, int stages) {
  const model::FlopsPerToken one_layer = model::model_flops_per_token(m, tr.seq_len, 0);
  const double attention = (one_layer.attention_projections + one_layer.core_attention) / m.layers;
  int moe_layers = 0;
  for (int i = 0; i < m.layers; ++i) moe_layers += model::is_moe_layer(m, i) ? 1 : 0;
  const double moe = moe_layers > 0 ? one_layer.moe_ffn / moe_layers : 0;
  const double dense = m.layers > moe_layers ? one_layer.dense_ffn / (m.layers - moe_layers) : 0;
  const double head = one_layer.logits * (tr.precision == Precision::bf16 ? 1.0 : 2.0);
  std::vector<double> w;  // per transformer layer, then one tail item (MTP layers + head)
  for (int i = 0; i < m.layers; ++i) w.push_back(attention + (model::is_moe_layer(m, i) ? moe : dense));
  const double tail = tr.mtp_layers * (attention + (m.moe.experts > 0 ? moe : dense) + head) + head;

  // Every virtual stage should take the same time: in 1F1B a micro-batch passes each stage in
  // turn, so one slow stage stalls the pipeline. Each stage's target is total / stages; the
  // last stage holds the tail plus whatever layers remain (none when the tail alone exceeds the
  // target, as on DeepSeek-V3 with MTP). Layers go to the stage where their cumulative weight
  // crosses the cumulative target.
  double layers_weight = 0;
  for (double x : w) layers_weight += x;
  const double total = layers_weight + tail;
  const bool tail_alone = stages > 1 && tail >= total / stages;
  const std::vector<double> target(stages, tail_alone ? layers_weight / (stages - 1) : total / stages);
  std::vector<int> sizes(stages, 0);
  double cumulative_target = 0, cumulative = 0;
  size_t next = 0;
  for (int v = 0; v < stages; ++v) {
    cumulative_target += target[v];
    // Take layers while that brings the cumulative weight closer to the cumulative target.
    if (tail_alone && v == stages - 1) break;
    while (next < w.size() && (v == stages - 1 || (tail_alone && v == stages - 2) || std::abs(cumulative + w[next] - cumulative_target) <=
                                                      std::abs(cumulative - cumulative_target))) {
      cumulative += w[next++];
      sizes[v]++;
    }
  }
  std::string out;
  for (int s = 0; s < stages; ++s) {
    if (s > 0) out += '|';
    if (s == 0) out += 'E';
    out.append(sizes[s], 't');
  }
  out.append(tr.mtp_layers, 'm');
  out += 'L';
  return out;
}

// What each schedule needs of the layout, from its reference implementation's checks.
std::vector<std::string> schedule_problems(const Layout& l, const RecipeSpec& recipe) {
  std::vector<std::string> out;
  const std::string name(to_string(l.schedule));
  auto require = [&](bool ok, std::string why) {
    if (!ok) out.push_back(std::move(why));
  };
  switch (l.schedule) {
    case Schedule::one_f_one_b: break;
    case Schedule::zb_h1:
      require(l.vpp == 1, fmt::format("zb-h1 is 1F1B with a split backward, one model chunk per rank: vpp must "
                                      "be 1, got {} (zb-v holds two chunks)", l.vpp));
      break;
    case Schedule::zb_v:
    case Schedule::dualpipe_v:
      require(l.vpp == 2, fmt::format("{} places two model chunks per rank in a V (stages r and 2*pp-1-r): vpp "
                                      "must be 2, got {}", name, l.vpp));
      break;
    case Schedule::dualpipe:
      require(l.vpp == 1, fmt::format("dualpipe holds one stage per direction on each rank (stages r and "
                                      "pp-1-r of one model split in pp): vpp must be 1, got {}", l.vpp));
      require(l.pp % 2 == 0, fmt::format("dualpipe pairs rank r with rank pp-1-r: pp must be even, got {}", l.pp));
      require(l.microbatches % 2 == 0,
              fmt::format("dualpipe feeds half of the micro-batches in at each end: their number must be "
                          "even, got {}", l.microbatches));
      break;
  }
  // DualPipe's step() asserts num_chunks >= num_ranks * 2 (both variants).
  if (l.schedule == Schedule::dualpipe || l.schedule == Schedule::dualpipe_v)
    require(l.microbatches >= 2 * l.pp,
            fmt::format("{} needs at least 2*pp = {} micro-batches per step, got {}", name, 2 * l.pp, l.microbatches));
  // Per-block sharding gathers a block before each forward and backward of it; a backward split
  // into B and W passes (zero bubble) or two copies of a stage (dualpipe) would need its own rule.
  require(!l.fsdp || l.schedule == Schedule::one_f_one_b,
          fmt::format("layout.sharding fsdp is modelled with the 1f1b schedule (interleaved or not), not {}: "
                      "use sharding \"optimizer\" or schedule 1f1b", name));
  if (l.schedule == Schedule::zb_h1 || l.schedule == Schedule::zb_v)
    require(!recipe.ep_overlap,
            fmt::format("recipe.ep_overlap overlaps a forward with a backward chunk; {} has no such pairs "
                        "(1f1b, dualpipe and dualpipev do): turn it off", name));
  return out;
}

}  // namespace

RankCoord Layout::coord(int rank) const {
  RankCoord c;
  int r = rank;
  c.tp = r % tp; r /= tp;
  c.cp = r % cp; r /= cp;
  c.dp = r % dp; r /= dp;
  c.pp = r;
  r = rank;
  c.etp = r % etp; r /= etp;
  c.ep = r % ep; r /= ep;
  c.edp = r % edp;
  return c;
}

int Layout::stage_index(int pp_rank, int chunk) const {
  switch (schedule) {
    case Schedule::zb_v:
    case Schedule::dualpipe_v: return chunk == 0 ? pp_rank : 2 * pp - 1 - pp_rank;
    case Schedule::dualpipe: return chunk == 0 ? pp_rank : pp - 1 - pp_rank;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: break;
  }
  return chunk * pp + pp_rank;
}

int Layout::direction(int microbatch) const {
  return schedule == Schedule::dualpipe && microbatch >= microbatches / 2 ? 1 : 0;
}

StageHolder Layout::holder(int stage, int microbatch) const {
  switch (schedule) {
    case Schedule::zb_v:
    case Schedule::dualpipe_v: return stage < pp ? StageHolder{stage, 0} : StageHolder{2 * pp - 1 - stage, 1};
    case Schedule::dualpipe:
      return direction(microbatch) == 0 ? StageHolder{stage, 0} : StageHolder{pp - 1 - stage, 1};
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: break;
  }
  return {stage % pp, stage / pp};
}

int Layout::mirror_pp_rank(int pp_rank) const {
  return schedule == Schedule::dualpipe ? pp - 1 - pp_rank : pp_rank;
}

std::vector<int> Layout::copy_holders(int pp_rank) const {
  const int mirror = mirror_pp_rank(pp_rank);
  if (mirror == pp_rank) return {pp_rank};
  return {std::min(pp_rank, mirror), std::max(pp_rank, mirror)};
}

int Layout::dense_rank(int t, int c, int d, int p) const { return t + tp * (c + cp * (d + dp * p)); }
int Layout::expert_rank(int t, int e, int d, int p) const { return t + etp * (e + ep * (d + edp * p)); }

std::vector<int> Layout::tp_group(int rank) const {
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int i = 0; i < tp; ++i) g.push_back(dense_rank(i, c.cp, c.dp, c.pp));
  return g;
}
std::vector<int> Layout::cp_group(int rank) const {
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int i = 0; i < cp; ++i) g.push_back(dense_rank(c.tp, i, c.dp, c.pp));
  return g;
}
std::vector<int> Layout::dp_group(int rank) const {
  // Dense gradients are reduced over data and context parallel ranks together, and over both
  // copies of the stage under dualpipe.
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int p : copy_holders(c.pp))
    for (int d = 0; d < dp; ++d)
      for (int i = 0; i < cp; ++i) g.push_back(dense_rank(c.tp, i, d, p));
  return g;
}
std::vector<int> Layout::ep_group(int rank) const {
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int i = 0; i < ep; ++i) g.push_back(expert_rank(c.etp, i, c.edp, c.pp));
  return g;
}
std::vector<int> Layout::edp_group(int rank) const {
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int p : copy_holders(c.pp))
    for (int i = 0; i < edp; ++i) g.push_back(expert_rank(c.etp, c.ep, i, p));
  return g;
}
namespace {

// The contiguous slice of `group` of `size` ranks that holds `rank` (a shard group), or every
// size-th rank from `rank`'s position in it (the replicas of its shard).
std::vector<int> slice_of(const std::vector<int>& group, int rank, int size, bool replicas) {
  const auto at = static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
  std::vector<int> out;
  if (!replicas) {
    const int first = at / size * size;
    for (int i = first; i < first + size && i < static_cast<int>(group.size()); ++i) out.push_back(group[i]);
  } else {
    for (int i = at % size; i < static_cast<int>(group.size()); i += size) out.push_back(group[i]);
  }
  return out;
}

}  // namespace

std::vector<int> Layout::dp_shard_group(int rank) const {
  const std::vector<int> g = dp_group(rank);
  return slice_of(g, rank, static_cast<int>(g.size()) / dp_replicate, false);
}
std::vector<int> Layout::dp_replicate_group(int rank) const {
  const std::vector<int> g = dp_group(rank);
  return slice_of(g, rank, static_cast<int>(g.size()) / dp_replicate, true);
}
std::vector<int> Layout::edp_shard_group(int rank) const {
  const std::vector<int> g = edp_group(rank);
  return slice_of(g, rank, static_cast<int>(g.size()) / dp_replicate, false);
}
std::vector<int> Layout::edp_replicate_group(int rank) const {
  const std::vector<int> g = edp_group(rank);
  return slice_of(g, rank, static_cast<int>(g.size()) / dp_replicate, true);
}

std::vector<int> Layout::pp_group(int rank) const {
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int p = 0; p < pp; ++p) g.push_back(dense_rank(c.tp, c.cp, c.dp, p));
  return g;
}

Layout make_layout(const Scenario& s) {
  const LayoutSpec& in = s.layout;
  const ModelSpec& m = s.model;
  const TrainingSpec& tr = s.training;
  std::vector<std::string> problems;
  auto require = [&](bool ok, std::string why) {
    if (!ok) problems.push_back(std::move(why));
  };

  Layout l;
  l.world = s.gpus;
  l.tp = in.tp;
  l.cp = in.cp;
  l.pp = in.pp;
  l.vpp = in.vpp;
  l.ep = in.ep;
  l.etp = in.etp;
  l.micro_batch = tr.micro_batch;
  try {
    l.schedule = parse_schedule(in.schedule);
  } catch (const std::invalid_argument& e) {
    problems.push_back(e.what());
  }
  l.interleaved = l.schedule == Schedule::one_f_one_b && in.vpp > 1;
  l.combined_1f1b = l.schedule == Schedule::one_f_one_b && s.recipe.ep_overlap;
  l.chunks = l.schedule == Schedule::dualpipe ? 2 : in.vpp;
  l.param_copies = l.schedule == Schedule::dualpipe ? 2 : 1;
  l.fsdp = in.sharding == "fsdp";
  l.reshard_after_forward = in.reshard_after_forward;

  // Products of degrees in 64 bits: each degree may be up to 2^24 (the schema's integer bound).
  const long long model_parallel = 1LL * in.tp * in.cp * in.pp;
  require(s.gpus % model_parallel == 0,
          fmt::format("world size {} is not divisible by tp*cp*pp = {}*{}*{} = {}", s.gpus, in.tp,
                      in.cp, in.pp, model_parallel));
  l.dp = model_parallel <= s.gpus ? static_cast<int>(s.gpus / model_parallel) : 1;
  require(in.dp == 0 || in.dp == l.dp,
          fmt::format("dp = {} given, but gpus / (tp*cp*pp) = {} / {} = {}", in.dp, s.gpus,
                      model_parallel, l.dp));
  const int per_stage = s.gpus / std::max(1, in.pp);
  const long long expert_parallel = 1LL * in.ep * in.etp;
  require(per_stage % expert_parallel == 0,
          fmt::format("ep*etp = {}*{} = {} must divide the {} ranks of a pipeline stage", in.ep,
                      in.etp, expert_parallel, per_stage));
  l.edp = expert_parallel <= per_stage ? std::max(1, static_cast<int>(per_stage / expert_parallel)) : 1;
  if (m.moe.experts > 0) {
    require(m.moe.experts % in.ep == 0,
            fmt::format("{} experts cannot be split evenly over ep = {}", m.moe.experts, in.ep));
    require(m.moe.expert_ffn % in.etp == 0,
            fmt::format("expert FFN {} is not divisible by etp = {}", m.moe.expert_ffn, in.etp));
  } else {
    require(in.ep == 1, fmt::format("ep = {} on a dense model (no experts)", in.ep));
  }
  require(m.attention.heads % in.tp == 0,
          fmt::format("{} attention heads are not divisible by tp = {}", m.attention.heads, in.tp));
  if (m.attention.kind == "gqa" && m.attention.kv_heads >= in.tp)
    require(m.attention.kv_heads % in.tp == 0,
            fmt::format("{} KV heads are not divisible by tp = {}", m.attention.kv_heads, in.tp));
  require(m.dense_ffn == 0 || m.dense_ffn % in.tp == 0,
          fmt::format("dense FFN {} is not divisible by tp = {}", m.dense_ffn, in.tp));
  require(tr.seq_len % (in.cp * (in.cp > 1 ? 2LL : 1LL)) == 0,
          fmt::format("sequence length {} is not divisible by 2*cp = {} (load-balanced context "
                      "parallelism splits each sequence in 2*cp chunks)", tr.seq_len, 2LL * in.cp));
  const long long tokens_per_rank = 1LL * tr.seq_len * tr.micro_batch / in.cp;
  require(in.tp == 1 || tokens_per_rank % in.tp == 0,
          fmt::format("tokens per micro-batch {} not divisible by tp = {} (sequence parallelism)",
                      tokens_per_rank, in.tp));

  const long long batch_per_step = 1LL * tr.micro_batch * l.dp;
  require(batch_per_step > 0 && tr.global_batch % batch_per_step == 0,
          fmt::format("global batch {} is not divisible by micro_batch*dp = {}*{} = {}",
                      tr.global_batch, tr.micro_batch, l.dp, batch_per_step));
  l.microbatches = batch_per_step > 0 ? static_cast<int>(tr.global_batch / batch_per_step) : 0;
  if (l.interleaved)
    require(l.microbatches % in.pp == 0,
            fmt::format("interleaved 1F1B needs micro-batches ({}) to be a multiple of pp ({})",
                        l.microbatches, in.pp));
  require(l.microbatches >= 1, "fewer sequences in the global batch than data-parallel replicas");
  for (std::string& why : schedule_problems(l, s.recipe)) problems.push_back(std::move(why));
  // HSDP: replicas of each shard, dense and expert alike (TorchTitan's dp_replicate mesh axis is
  // outermost in both meshes).
  if (in.dp_shard > 0) {
    const long long dense = 1LL * l.dp * in.cp;
    const bool divides = dense % in.dp_shard == 0;
    const long long replicas = divides ? dense / in.dp_shard : 1;
    const bool experts_divide = l.edp % replicas == 0;
    require(l.fsdp, fmt::format("layout.dp_shard {} shards blocks: it needs sharding \"fsdp\"", in.dp_shard));
    require(divides,
            fmt::format("layout.dp_shard {} must divide the dp x cp = {} data-parallel ranks", in.dp_shard, dense));
    require(experts_divide,
            fmt::format("layout.dp_shard {} gives {} replicas, which must divide the experts' edp = {} (each replica "
                        "holds whole expert shards)", in.dp_shard, replicas, l.edp));
    if (l.fsdp && divides && experts_divide) l.dp_replicate = static_cast<int>(replicas);
  }

  // Virtual stages.
  const long long n_stages = 1LL * in.pp * in.vpp;
  // One list entry per virtual stage: bound them (pp*vpp reaches 2^48 otherwise).
  constexpr long long kMaxStages = 1 << 16;
  require(n_stages <= kMaxStages, fmt::format("pp*vpp = {}*{} = {} virtual stages; at most {}", in.pp, in.vpp,
                                              n_stages, kMaxStages));
  if (n_stages > kMaxStages) {
    // reported above; nothing to expand
  } else if (in.pipeline_layout.empty()) {
    l.pipeline_layout = generate_layout(m, tr, n_stages);
    l.pipeline_layout_generated = true;
  } else {
    l.pipeline_layout = in.pipeline_layout;
  }
  std::vector<std::string> stages;
  try {
    stages = expand_pipeline_layout(l.pipeline_layout);
  } catch (const InfeasibleError& e) {
    problems.push_back(e.what());
  }
  if (!stages.empty()) {
    require(static_cast<long long>(stages.size()) == n_stages,
            fmt::format("pipeline_layout has {} virtual stages, pp*vpp = {}*{} = {} expected",
                        stages.size(), in.pp, in.vpp, n_stages));
    int t_total = 0, m_total = 0, e_total = 0, l_total = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
      VirtualStage v;
      const StageHolder h = l.holder(static_cast<int>(i), 0);
      v.pp_rank = h.pp_rank;
      v.chunk = h.chunk;
      v.first_layer = t_total;
      for (char c : stages[i]) {
        if (c == 't') { ++v.layers; ++t_total; }
        if (c == 'm') { ++v.mtp_layers; ++m_total; }
        if (c == 'E') { v.embedding = true; ++e_total; }
        if (c == 'L') { v.output = true; ++l_total; }
      }
      l.stages.push_back(v);
    }
    require(t_total == m.layers, fmt::format("pipeline_layout places {} transformer layers, the "
                                             "model has {}", t_total, m.layers));
    require(m_total == tr.mtp_layers, fmt::format("pipeline_layout places {} MTP layers, the run "
                                                  "has mtp_layers = {}", m_total, tr.mtp_layers));
    require(e_total == 1 && !stages.front().empty() && stages.front().front() == 'E',
            "pipeline_layout must start with the embedding 'E' exactly once");
    require(l_total == 1 && !stages.back().empty() && stages.back().back() == 'L',
            "pipeline_layout must end with the loss 'L' exactly once");
    // An even split into more virtual stages than it can fill leaves some empty: refused, as
    // Megatron would build a chunk with no layer (a stage the user did not ask for).
    if (l.pipeline_layout_generated) {
      int empty = 0;
      for (const VirtualStage& v : l.stages) empty += v.layers == 0 && !v.output ? 1 : 0;
      require(empty == 0, fmt::format("pp*vpp = {}*{} = {} virtual stages for {} transformer layers: the even split "
                                      "leaves {} of them without a layer; use fewer virtual stages, or give "
                                      "pipeline_layout", in.pp, in.vpp, n_stages, m.layers, empty));
    }
  }

  if (!problems.empty()) {
    std::string msg = fmt::format("infeasible layout for {} GPUs (tp={} cp={} pp={} vpp={} ep={} "
                                  "etp={}):", s.gpus, in.tp, in.cp, in.pp, in.vpp, in.ep, in.etp);
    for (const auto& p : problems) msg += "\n  - " + p;
    throw InfeasibleError(msg, problems);
  }
  return l;
}

}  // namespace moesim::plan
