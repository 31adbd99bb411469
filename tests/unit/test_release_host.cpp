// The software as each release ran it (issue 37): the host CPU's speed per operation, Transformer
// Engine's own host time per module call by release, per-expert GroupedLinear launches before
// TE 2.13/2.14, and which release calls HybridEP through its blocking Python API.
#include <catch2/catch.hpp>

#include "moesim/config/loader.hpp"
#include "moesim/cost/section_cost.hpp"
#include "moesim/model/ops.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

// One eager section of `op` alone, costed on `s`.
cost::ComputeCost one_op(const Scenario& s, const model::Op& op, model::Pass pass = model::Pass::forward) {
  model::Section section{"dense_ffn", {op}};  // never graph-captured by a partial scope
  return cost::section_cost(section, pass, s, test::default_calibration());
}

// TE2053's GEMM: BF16, hidden 2048, 8192 tokens.
model::Op linear(bool te_module) {
  model::Op op;
  op.name = "linear";
  op.kind = model::OpKind::gemm;
  op.m = 8192;
  op.k = 2048;
  op.n = 2048;
  op.low_precision = false;
  op.te_module = te_module;
  return op;
}

Scenario on(const std::string& system, const std::string& stack) {
  Scenario s = test::record_gb300();
  s.system = config::load_system(system, test::configs_dir());
  s.stack = config::load_stack(stack, test::configs_dir());
  s.recipe.cuda_graphs = "none";
  return s;
}

}  // namespace

TEST_CASE("Grace spends TE2053's 2.75 times an x86 host's time per framework operation", "[cost][host][published]") {
  // TE2053: torch.nn.Linear's forward costs 37.08 us of CPU on GB200 and 13.48 us on DGX H100.
  const double published = 37.08 / 13.48;
  for (const char* grace : {"gb200-nvl72", "gb300-nvl72"})
    CHECK(config::load_system(grace, test::configs_dir()).host_op_time_ratio == Approx(published).epsilon(0.01));
  for (const char* x86 : {"hgx-h100", "hgx-h200", "hgx-b200"})
    CHECK(config::load_system(x86, test::configs_dir()).host_op_time_ratio == 1.0);
  // Every launch of a section costs the ratio more host time on Grace, its GPU time unchanged.
  const Scenario grace = on("gb200-nvl72", "megatron-bridge-26.04");
  Scenario x86 = grace;
  x86.system.host_op_time_ratio = 1.0;
  const cost::ComputeCost g = one_op(grace, linear(false)), x = one_op(x86, linear(false));
  CHECK(g.host_seconds / x.host_seconds == Approx(published).epsilon(0.01));
  CHECK(g.gpu_seconds == Approx(x.gpu_seconds));
}

TEST_CASE("A TE Linear costs TE2053's 62.6 us more host time than torch's on GB200 in 25.11, none from TE 2.12",
          "[cost][host][published]") {
  // TE2053 (GB200, before TE 2.12): TE Linear forward 99.66 us of CPU, torch.nn.Linear 37.08 us.
  const double published_excess = (99.66 - 37.08) * 1e-6;
  const Scenario old_te = on("gb200-nvl72", "megatron-bridge-25.11");
  const double excess = one_op(old_te, linear(true)).host_seconds - one_op(old_te, linear(false)).host_seconds;
  CHECK(excess == Approx(published_excess).epsilon(0.01));
  // TE2126: TE 2.12's TELinear is "nearly the same" as torch's.
  for (const char* stack : {"megatron-bridge-26.02", "megatron-bridge-26.04", "megatron-bridge-26.06"}) {
    const Scenario s = on("gb200-nvl72", stack);
    INFO(stack);
    CHECK(one_op(s, linear(true)).host_seconds == Approx(one_op(s, linear(false)).host_seconds));
  }
  // Megatron's router (torch's linear) and output layer (its own ColumnParallelLinear) are no TE
  // modules; its attention projections are.
  const model::LayerProgram layer = model::layer_program(old_te.model, model::shard_for(old_te), true);
  for (const model::Op& op : layer.router.ops)
    if (op.kind == model::OpKind::gemm) CHECK_FALSE(op.te_module);
  for (const model::Op& op : layer.attention.ops)
    if (op.kind == model::OpKind::gemm) CHECK(op.te_module);
  for (const model::Op& op : model::output_section(old_te.model, model::shard_for(old_te)).ops)
    if (op.kind == model::OpKind::gemm) CHECK_FALSE(op.te_module);
  // A CUDA graph replays the kernels without the module's Python.
  Scenario graphed = old_te;
  graphed.recipe.cuda_graphs = "full_iteration";
  CHECK(one_op(graphed, linear(true)).host_seconds == Approx(one_op(graphed, linear(false)).host_seconds));
  // The backward's weight-gradient half belongs to a call already paid for.
  model::Section section{"dense_ffn", {linear(true)}};
  const auto& cal = test::default_calibration();
  const double data = cost::section_cost(section, model::Pass::backward, old_te, cal, cost::GradPart::data_only).host_seconds;
  const double weight = cost::section_cost(section, model::Pass::backward, old_te, cal, cost::GradPart::weight_only).host_seconds;
  const double all = cost::section_cost(section, model::Pass::backward, old_te, cal).host_seconds;
  CHECK(data + weight == Approx(all));
  CHECK(data - weight == Approx(published_excess).epsilon(0.01));
}

TEST_CASE("Before TE 2.13/2.14 each local expert's quantisation and GEMM is a launch of its own", "[model][host]") {
  Scenario s = on("gb300-nvl72", "megatron-bridge-26.02");
  s.training.precision = Precision::mxfp8;
  s.recipe.fp8_dispatch = false;
  const int local_experts = s.model.moe.experts / s.layout.ep;
  REQUIRE(local_experts > 1);
  auto kernels = [&](const std::string& stack, const std::string& name) {
    s.stack = config::load_stack(stack, test::configs_dir());
    const model::LayerProgram p = model::layer_program(s.model, model::shard_for(s), true);
    for (const model::Op& op : p.experts.ops)
      if (op.name == name) return op.kernels;
    FAIL("no op " << name);
    return 0;
  };
  for (const char* op : {"expert_gate_up", "expert_down", "quantize_expert_in", "quantize_expert_act"}) {
    INFO(op);
    CHECK(kernels("megatron-bridge-26.02", op) == local_experts * kernels("megatron-bridge-26.04", op));
  }
  // The launches add host and GPU time, never FLOPs.
  s.stack = config::load_stack("megatron-bridge-26.02", test::configs_dir());
  const auto per_expert = model::layer_program(s.model, model::shard_for(s), true);
  s.stack.grouped_linear = "grouped";
  const auto grouped = model::layer_program(s.model, model::shard_for(s), true);
  const auto& cal = test::default_calibration();
  const auto a = cost::section_cost(per_expert.experts, model::Pass::forward, s, cal);
  const auto b = cost::section_cost(grouped.experts, model::Pass::forward, s, cal);
  CHECK(a.flop == Approx(b.flop));
  CHECK(a.host_seconds > b.host_seconds);
  CHECK(a.gpu_seconds > b.gpu_seconds);
}

TEST_CASE("MXFP8 scale buffers: two torch.zeros per tensor, one per expert group after the bulk allocation, "
          "none after the fused swizzle", "[model][host][release]") {
  // MLM-G §2.1.2-2.1.3; TE-SWZ: v2.5 quantizer.cpp zero-fills each row- and column-wise
  // scale_inv (at::zeros), v2.6 cast.cpp one bulk buffer per split quantisation, v2.7 none.
  Scenario s = on("gb200-nvl72", "megatron-lm-gb200-guide-baseline");
  s.training.precision = Precision::mxfp8;
  s.recipe.fp8_dispatch = false;
  s.recipe.fused_quantization = false;
  const int local_experts = s.model.moe.experts / s.layout.ep;
  REQUIRE(local_experts > 1);
  struct Counts {
    int expert_in, attention_out, zero_buffers, permute;
    double permute_bandwidth_scale;
  };
  auto counts = [&](bool fused_permute, bool fused_swizzle) {
    s.recipe.fused_permute = fused_permute;
    s.recipe.fused_swizzle = fused_swizzle;
    const model::LayerProgram p = model::layer_program(s.model, model::shard_for(s), true);
    Counts c{0, 0, 0, 0, 0};
    for (const model::Op& op : p.experts.ops) {
      if (op.name == "quantize_expert_in") c.expert_in = op.kernels;
      if (op.name == "zero_scale_buffer") c.zero_buffers += op.kernels;
    }
    for (const model::Op& op : p.attention.ops)
      if (op.name == "quantize_attention_out") c.attention_out = op.kernels;
    for (const model::Op& op : p.router.ops)
      if (op.name == "permute") {
        c.permute = op.kernels;
        c.permute_bandwidth_scale = op.bandwidth_scale;
      }
    return c;
  };
  // Step 0: the cast and two zeros, per expert; the permute already one (slow) kernel.
  const Counts step0 = counts(false, false);
  CHECK(step0.expert_in == local_experts * 3);
  CHECK(step0.attention_out == 3);
  CHECK(step0.zero_buffers == 0);
  CHECK(step0.permute == 1);
  CHECK(step0.permute_bandwidth_scale == Approx(1.0 / 3));
  // Step 1: the experts' zeros become one per grouped quantisation (two: before each GEMM); other
  // tensors keep theirs.
  const Counts step1 = counts(true, false);
  CHECK(step1.expert_in == local_experts);
  CHECK(step1.attention_out == 3);
  CHECK(step1.zero_buffers == 2);
  CHECK(step1.permute == 1);
  CHECK(step1.permute_bandwidth_scale == 1.0);
  // Step 8: the swizzle zero-pads; no zeros anywhere.
  const Counts step8 = counts(true, true);
  CHECK(step8.expert_in == local_experts);
  CHECK(step8.attention_out == 1);
  CHECK(step8.zero_buffers == 0);
}

TEST_CASE("MXFP8 scale swizzles: both operands per GEMM before TE 2.12, the weight's after; per expert "
          "before the multi-tensor swizzle", "[model][host][release]") {
  // TE-SWZ: v2.9 gemm.cpp swizzles A and B (a kernel each; a grouped GEMM per expert until PR
  // 2019, then one multi-tensor kernel per operand); v2.12 quantises inputs and gradients with
  // GEMM-ready scales.
  Scenario s = on("gb200-nvl72", "megatron-lm-gb200-guide-baseline");
  s.training.precision = Precision::mxfp8;
  const int local_experts = s.model.moe.experts / s.layout.ep;
  auto swizzles = [&](const model::Section& sec, const std::string& gemm) {
    int kernels = -1;
    for (const model::Op& op : sec.ops)
      if (op.name == gemm + "_scale_swizzle") kernels = op.kernels;
    return kernels;
  };
  auto program = [&] { return model::layer_program(s.model, model::shard_for(s), true); };
  auto first_gemm = [](const model::Section& sec) {
    for (const model::Op& op : sec.ops)
      if (op.kind == model::OpKind::gemm && op.low_precision) return op.name;
    return std::string();
  };
  s.recipe.fused_swizzle = false;  // MLM-G steps 0 to 7 (TE 2.9 before PR 2019)
  auto p = program();
  const std::string attention_gemm = first_gemm(p.attention);
  REQUIRE_FALSE(attention_gemm.empty());
  CHECK(swizzles(p.attention, attention_gemm) == 2);
  CHECK(swizzles(p.experts, "expert_gate_up") == 2 * local_experts);
  CHECK(swizzles(p.experts, "expert_down") == 2 * local_experts);
  // The swizzle sits right before its GEMM and is recomputed with it.
  for (std::size_t i = 0; i + 1 < p.experts.ops.size(); ++i)
    if (p.experts.ops[i].name == "expert_down_scale_swizzle") {
      CHECK(p.experts.ops[i + 1].name == "expert_down");
      CHECK(p.experts.ops[i].module == p.experts.ops[i + 1].module);
    }
  s.recipe.fused_swizzle = true;  // steps 8 to 12 and Megatron-Bridge 25.11 (TE 2.9)
  p = program();
  CHECK(swizzles(p.attention, attention_gemm) == 2);
  CHECK(swizzles(p.experts, "expert_gate_up") == 2);
  s.stack = config::load_stack("megatron-bridge-26.02", test::configs_dir());  // TE 2.12
  s.recipe.cuda_graphs = "none";
  p = program();
  CHECK(swizzles(p.attention, attention_gemm) == 1);
  CHECK(swizzles(p.experts, "expert_gate_up") == 1);
  // BF16 GEMMs have no block scales; neither has the BF16 router.
  s.training.precision = Precision::bf16;
  p = program();
  CHECK(swizzles(p.attention, attention_gemm) == -1);
  CHECK(swizzles(p.router, "router") == -1);
}

TEST_CASE("The releases, on and off: what each stack file says it ran", "[config][release]") {
  // One row per release: TE module host time, GroupedLinear launches, how HybridEP is called,
  // which MXFP8 scales each GEMM swizzles (TE-SWZ), HybridEP's SMs (MB-P set_common_perf_overrides / overrides.py: 32 whenever HybridEP runs),
  // the cuDNN it ships (MB-R software versions; "" = not listed, the calibrated one).
  struct Release {
    const char* stack;
    bool te_module_overhead;
    const char* grouped_linear;
    const char* hybridep_call;
    int dispatcher_sms;
    bool fused_quantization;
    const char* mxfp8_gemm_swizzle;
    const char* cudnn_version;
  };
  const Release releases[] = {
      {"megatron-lm-gb200-guide-baseline", true, "per_expert", "torch_api", 16, false, "operands", "9.14"},
      {"megatron-bridge-25.11", true, "per_expert", "torch_api", 32, false, "operands", "9.13.1"},
      {"megatron-bridge-26.02", false, "per_expert", "torch_api", 32, true, "weights", "9.18.0"},
      {"megatron-bridge-26.04", false, "grouped", "torch_api", 32, true, "weights", "9.20.0"},
      {"megatron-bridge-26.06", false, "grouped", "kernel", 32, true, "weights", ""},
  };
  for (const Release& r : releases) {
    INFO(r.stack);
    const StackSpec s = config::load_stack(r.stack, test::configs_dir());
    CHECK((s.te_module_host_s > 0) == r.te_module_overhead);
    CHECK(s.grouped_linear == r.grouped_linear);
    CHECK(s.hybridep_call == r.hybridep_call);
    CHECK(s.recipe.dispatcher_sms == r.dispatcher_sms);
    CHECK(s.recipe.fused_quantization == r.fused_quantization);
    CHECK(s.mxfp8_gemm_swizzle == r.mxfp8_gemm_swizzle);
    CHECK(s.cudnn_version == r.cudnn_version);
    if (!s.cudnn_version.empty()) CHECK(s.sources.count("cudnn_version") == 1);
    for (const char* key : {"te_module_host_us", "grouped_linear", "hybridep_call", "recipe.dispatcher_sms", "mxfp8_gemm_swizzle"})
      CHECK(s.sources.count(key) == 1);
  }
  // GB300's 25.11 runs captured only the router and MoE preprocessing (MB-PR, 5df97522b).
  for (const char* row : {"gb300-bf16-2511", "gb300-mxfp8-2511"}) {
    INFO(row);
    CHECK(test::bundled(std::string("scenarios/published/") + row + ".json").recipe.cuda_graphs == "router_shared_expert");
  }
}
