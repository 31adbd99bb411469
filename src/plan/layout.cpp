// Layout validation and Megatron's rank order.
#include "moesim/plan/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "moesim/config/error.hpp"

namespace moesim::plan {

namespace {

// Spreads `slots` units of work over `stages` virtual stages as evenly as possible; the extra
// units go to the middle stages because the first stage also embeds and the last computes the
// logits and loss.
std::string generate_layout(int layers, int mtp_layers, int stages) {
  // The output head and loss cost about one MoE layer's time on DeepSeek-sized vocabularies,
  // so they take one slot on the last stage; each MTP layer takes one more.
  const int slots = layers + mtp_layers + 1;
  std::vector<int> per_stage(stages, slots / stages);
  std::vector<int> order;  // who gets the remainder: middle stages, then the last, then the first
  for (int i = 1; i < stages - 1; ++i) order.push_back(i);
  if (stages > 1) order.push_back(stages - 1);
  order.push_back(0);
  for (int k = 0; k < slots % stages; ++k) per_stage[order[k % order.size()]]++;
  // Transformer layers per stage: the last stage's slots also hold MTP and the loss.
  std::vector<int> t(per_stage);
  int deficit = mtp_layers + 1;
  for (int s = stages - 1; s >= 0 && deficit > 0; --s) {
    int take = std::min(t[s], deficit);
    t[s] -= take;
    deficit -= take;
  }
  std::string out;
  for (int s = 0; s < stages; ++s) {
    if (s > 0) out += '|';
    if (s == 0) out += 'E';
    out.append(t[s], 't');
  }
  out.append(mtp_layers, 'm');
  out += 'L';
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
  // Dense gradients are reduced over data and context parallel ranks together.
  RankCoord c = coord(rank);
  std::vector<int> g;
  for (int d = 0; d < dp; ++d)
    for (int i = 0; i < cp; ++i) g.push_back(dense_rank(c.tp, i, d, c.pp));
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
  for (int i = 0; i < edp; ++i) g.push_back(expert_rank(c.etp, c.ep, i, c.pp));
  return g;
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
  l.interleaved = in.vpp > 1;

  const int model_parallel = in.tp * in.cp * in.pp;
  require(s.gpus % model_parallel == 0,
          fmt::format("world size {} is not divisible by tp*cp*pp = {}*{}*{} = {}", s.gpus, in.tp,
                      in.cp, in.pp, model_parallel));
  l.dp = model_parallel > 0 ? s.gpus / model_parallel : 1;
  require(in.dp == 0 || in.dp == l.dp,
          fmt::format("dp = {} given, but gpus / (tp*cp*pp) = {} / {} = {}", in.dp, s.gpus,
                      model_parallel, l.dp));
  const int per_stage = s.gpus / std::max(1, in.pp);
  require(per_stage % (in.ep * in.etp) == 0,
          fmt::format("ep*etp = {}*{} = {} must divide the {} ranks of a pipeline stage", in.ep,
                      in.etp, in.ep * in.etp, per_stage));
  l.edp = std::max(1, per_stage / std::max(1, in.ep * in.etp));
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
  require(tr.seq_len % (in.cp * (in.cp > 1 ? 2 : 1)) == 0,
          fmt::format("sequence length {} is not divisible by 2*cp = {} (load-balanced context "
                      "parallelism splits each sequence in 2*cp chunks)", tr.seq_len, 2 * in.cp));
  require(in.tp == 1 || (tr.seq_len * tr.micro_batch / in.cp) % in.tp == 0,
          fmt::format("tokens per micro-batch {} not divisible by tp = {} (sequence parallelism)",
                      tr.seq_len * tr.micro_batch / in.cp, in.tp));

  const int batch_per_step = tr.micro_batch * l.dp;
  require(batch_per_step > 0 && tr.global_batch % batch_per_step == 0,
          fmt::format("global batch {} is not divisible by micro_batch*dp = {}*{} = {}",
                      tr.global_batch, tr.micro_batch, l.dp, batch_per_step));
  l.microbatches = batch_per_step > 0 ? tr.global_batch / batch_per_step : 0;
  if (l.interleaved)
    require(l.microbatches % in.pp == 0,
            fmt::format("interleaved 1F1B needs micro-batches ({}) to be a multiple of pp ({})",
                        l.microbatches, in.pp));
  require(l.microbatches >= 1, "fewer sequences in the global batch than data-parallel replicas");

  // Virtual stages.
  const int n_stages = in.pp * in.vpp;
  if (in.pipeline_layout.empty()) {
    l.pipeline_layout = generate_layout(m.layers, tr.mtp_layers, n_stages);
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
    require(static_cast<int>(stages.size()) == n_stages,
            fmt::format("pipeline_layout has {} virtual stages, pp*vpp = {}*{} = {} expected",
                        stages.size(), in.pp, in.vpp, n_stages));
    int t_total = 0, m_total = 0, e_total = 0, l_total = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
      VirtualStage v;
      v.pp_rank = static_cast<int>(i) % in.pp;
      v.chunk = static_cast<int>(i) / in.pp;
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
  }

  if (!problems.empty()) {
    std::string msg = fmt::format("infeasible layout for {} GPUs (tp={} cp={} pp={} vpp={} ep={} "
                                  "etp={}):", s.gpus, in.tp, in.cp, in.pp, in.vpp, in.ep, in.etp);
    for (const auto& p : problems) msg += "\n  - " + p;
    throw InfeasibleError(msg);
  }
  return l;
}

}  // namespace moesim::plan
