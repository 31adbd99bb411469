#include <fmt/format.h>

#include "schema.hpp"

namespace moesim::config {

namespace {

void describe_attention(Reader& r, AttentionSpec& a) {
  r.choice(key("kind", "mla: DeepSeek multi-head latent attention; gqa: grouped-query attention (MHA when kv_heads = heads)"),
           a.kind, {"mla", "gqa"});
  r.integer(key("heads", "query heads").at_least(1), a.heads);
  r.integer(key("kv_heads", "gqa: key/value heads").optional().at_least(0), a.kv_heads);
  r.integer(key("head_dim", "gqa: dimension of one head").optional().at_least(0), a.head_dim);
  r.integer(key("q_lora_rank", "mla: rank of the query compression; 0 = queries not compressed").optional().at_least(0),
            a.q_lora_rank);
  r.integer(key("kv_lora_rank", "mla: rank of the key/value compression").optional().at_least(0), a.kv_lora_rank);
  r.integer(key("qk_nope_head_dim", "mla: per-head query/key dimension without rotary embedding").optional().at_least(0),
            a.qk_nope_head_dim);
  r.integer(key("qk_rope_head_dim", "mla: per-head query/key dimension with rotary embedding").optional().at_least(0),
            a.qk_rope_head_dim);
  r.integer(key("v_head_dim", "mla: per-head value dimension").optional().at_least(0), a.v_head_dim);

  // Rules are declared unconditionally (as implications) so that the documentation lists them all.
  const bool gqa = a.kind == "gqa";
  r.rule("kv_heads", !gqa || (a.kv_heads >= 1 && a.heads % a.kv_heads == 0), "gqa: kv_heads >= 1 and divides heads",
         fmt::format("heads {}, kv_heads {}", a.heads, a.kv_heads));
  r.rule("head_dim", !gqa || a.head_dim >= 1, "gqa: head_dim >= 1");
  r.rule("kind", !gqa || (a.q_lora_rank == 0 && a.kv_lora_rank == 0 && a.qk_nope_head_dim == 0 &&
                          a.qk_rope_head_dim == 0 && a.v_head_dim == 0),
         "gqa: no mla keys (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)");
  r.rule("kv_lora_rank", gqa || a.kv_lora_rank >= 1, "mla: kv_lora_rank >= 1");
  r.rule("qk_nope_head_dim", gqa || a.qk_nope_head_dim >= 1, "mla: qk_nope_head_dim >= 1");
  r.rule("qk_rope_head_dim", gqa || a.qk_rope_head_dim >= 1, "mla: qk_rope_head_dim >= 1");
  r.rule("v_head_dim", gqa || a.v_head_dim >= 1, "mla: v_head_dim >= 1");
  r.rule("kind", gqa || (a.kv_heads == 0 && a.head_dim == 0), "mla: no gqa keys (kv_heads, head_dim)");
}

void describe_moe(Reader& r, MoeSpec& m) {
  r.integer(key("experts", "routed experts per MoE layer; 0 = dense model").optional().at_least(0), m.experts);
  r.integer(key("top_k", "routed experts per token").optional().at_least(0), m.top_k);
  r.integer(key("expert_ffn", "SwiGLU intermediate size of one routed expert").optional().at_least(0), m.expert_ffn);
  r.integer(key("shared_experts", "shared experts every token goes through").optional().at_least(0), m.shared_experts);
  r.integer(key("shared_ffn", "SwiGLU intermediate size of all shared experts together").optional().at_least(0),
            m.shared_ffn);
  r.integer(key("first_dense_layers", "leading layers with a dense FFN instead of MoE").optional().at_least(0),
            m.first_dense_layers);
  r.integer(key("moe_layer_freq", "every k-th layer after the dense ones is MoE").optional().at_least(1),
            m.moe_layer_freq);
  r.integer(key("n_group", "router groups: the experts split into this many equal groups of consecutive experts "
                           "(DeepSeek n_group, Megatron moe_router_num_groups); 1 = no group-limited routing")
                .optional().at_least(1),
            m.router_groups);
  r.integer(key("topk_group", "groups a token's top-k experts may come from (DeepSeek topk_group, Megatron "
                              "moe_router_group_topk); 0 = all groups")
                .optional().at_least(0),
            m.router_groups_per_token);
  r.number(key("expert_load_sigma", "without forced balance: log-normal sigma of an expert's share of the routed "
                                    "tokens per step and layer under the model's own load balancing (0: equal "
                                    "shares, only the sampling of each micro-batch's tokens differs)")
               .optional()
               .at_least(0)
               .at_most(2),
           m.expert_load_sigma);

  const bool moe = m.experts > 0;
  r.rule("top_k", !moe || (m.top_k >= 1 && m.top_k <= m.experts), "with experts: 1 <= top_k <= experts",
         fmt::format("top_k {}, experts {}", m.top_k, m.experts));
  r.rule("expert_ffn", !moe || m.expert_ffn >= 1, "with experts: expert_ffn >= 1");
  r.rule("experts", moe || (m.top_k == 0 && m.expert_ffn == 0 && m.shared_experts == 0 && m.first_dense_layers == 0),
         "a dense model (experts 0) sets no other moe key");
  r.rule("shared_ffn", (m.shared_experts > 0) == (m.shared_ffn > 0), "shared_ffn > 0 exactly when shared_experts > 0");
  r.rule("n_group", m.router_groups <= 1 || (moe && m.experts % m.router_groups == 0),
         "n_group > 1 divides experts", fmt::format("n_group {}, experts {}", m.router_groups, m.experts));
  r.rule("topk_group", m.router_groups_per_token <= m.router_groups, "topk_group <= n_group",
         fmt::format("topk_group {}, n_group {}", m.router_groups_per_token, m.router_groups));
  r.rule("topk_group", m.router_groups_per_token == 0 || m.router_groups <= 1 ||
                           m.top_k <= m.router_groups_per_token * (m.experts / m.router_groups),
         "top_k experts fit in topk_group groups",
         fmt::format("top_k {}, topk_group {} groups of {} experts", m.top_k, m.router_groups_per_token,
                     m.router_groups > 0 ? m.experts / m.router_groups : 0));
}

}  // namespace

void describe_model(Reader& r, ModelSpec& m) {
  r.text(key("name", "display name, e.g. \"DeepSeek-V3 671B\""), m.name);
  r.integer(key("layers", "transformer layers, multi-token-prediction layers excluded").at_least(1).at_most(65536),
            m.layers);
  r.integer(key("hidden", "hidden size").at_least(1), m.hidden);
  r.integer(key("dense_ffn", "SwiGLU intermediate size of the dense layers").optional().at_least(0), m.dense_ffn);
  r.integer(key("vocab", "vocabulary size").at_least(1), m.vocab);
  r.boolean(key("tied_embeddings", "input embedding and output layer share one matrix").optional(), m.tied_embeddings);
  r.object(key("attention", "the attention block"), [&](Reader& a) { describe_attention(a, m.attention); });
  r.object(key("moe", "the mixture of experts; absent = dense model").optional(),
           [&](Reader& e) { describe_moe(e, m.moe); });
  r.number(key("published_total_params_billions", "total parameters as published (for tests); 0 = none")
               .in("1e9 parameters", 1e9).optional().at_least(0).at_most(1e6),
           m.published_total_params);
  r.number(key("published_active_params_billions", "parameters active per token as published; 0 = none")
               .in("1e9 parameters", 1e9).optional().at_least(0).at_most(1e6),
           m.published_active_params);
  r.sources(sources_key(), m.sources);

  r.rule("moe.first_dense_layers", m.moe.first_dense_layers <= m.layers, "first_dense_layers <= layers");
  const bool has_dense_layers = m.moe.experts == 0 || m.moe.first_dense_layers > 0 || m.moe.moe_layer_freq > 1;
  r.rule("dense_ffn", !has_dense_layers || m.dense_ffn >= 1, "dense_ffn >= 1 when some layer is dense");
  r.rule("published_active_params_billions", m.published_active_params <= m.published_total_params,
         "at most published_total_params_billions");
}

}  // namespace moesim::config
