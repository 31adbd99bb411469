// The kernel model against measured and published component figures, one component at a time.
//  - H200 kernels measured by this project (configs/calibration/measured/h200_kernels.json: one H200 SXM,
//    PyTorch 2.11, CUDA 13.0, CUDA events, mean of 10 runs after 3 warm-ups): GEMMs, attention,
//    and DeepSeek-V3 layers composed of them (dense layer, MoE layer at 4 / 8 / 32 local
//    experts, MLA alone), each within 10 %.
//  - Published Blackwell figures the calibration is anchored on (configs/calibration/kernels.json
//    and configs/hardware/*.json say which): checked here so that an edit cannot silently
//    break the derivation.
// Tolerances were fixed before the results were seen.
#include <catch2/catch.hpp>
#include <cstdio>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/run.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

const nlohmann::json& h200() {
  static const nlohmann::json j = [] {
    std::ifstream f(test::repo() / "configs" / "calibration" / "measured" / "h200_kernels.json");
    nlohmann::json v;
    f >> v;
    return v;
  }();
  return j;
}

GpuSpec gpu(const std::string& name) { return config::load_gpu(name, test::configs_dir()); }

const nlohmann::json& measured_gemm(const std::string& name) {
  for (const auto& g : h200()["gemm_bf16"])
    if (g["name"] == name) return g;
  FAIL("no measured GEMM " << name);
  return h200();
}

// Measured forward + data gradient + weight gradient of one BF16 GEMM.
double measured_gemm_s(const std::string& name) {
  const auto& g = measured_gemm(name);
  return g["fwd_s"].get<double>() + g["dgrad_s"].get<double>() + g["wgrad_s"].get<double>();
}

double model_fwd_bwd_s(const model::Op& op, const GpuSpec& g) {
  return cost::op_cost(op, model::Pass::forward, Precision::bf16, g, test::default_calibration()).gpu_seconds +
         cost::op_cost(op, model::Pass::backward, Precision::bf16, g, test::default_calibration()).gpu_seconds;
}

// DeepSeek-V3 at TP1 on one micro-batch of 4096 tokens, with `ep` setting the local experts
// (256 / ep) and tokens per expert (4096 x 8 x ep / 256), as in the measurements.
model::LayerProgram dsv3_layer(int ep, bool moe) {
  const Scenario s = test::record_gb300();
  model::Shard shard;
  shard.seq_len = 4096;
  shard.ep = ep;
  shard.precision = Precision::bf16;
  shard.dispatcher = "hybridep";
  return model::layer_program(s.model, shard, moe);
}

const model::Op& op_named(const model::LayerProgram& p, const std::string& name) {
  for (const model::Section* s : {&p.attention, &p.router, &p.experts, &p.shared_experts, &p.dense_ffn})
    for (const auto& op : s->ops)
      if (op.name == name) return op;
  FAIL("no op " << name);
  return p.attention.ops.front();
}

struct Layer {
  double measured_s = 0, model_s = 0;
};

// MLA: the five projections, the core attention, the input RMSNorm forward.
Layer mla(const model::LayerProgram& p, const GpuSpec& g) {
  Layer l;
  const std::pair<const char*, const char*> projections[] = {{"mla_q_down", "mla_q_a"}, {"mla_q_up", "mla_q_b"},
                                                             {"mla_kv_down", "mla_kv_a"}, {"mla_kv_up", "mla_kv_b"},
                                                             {"attention_out_proj", "mla_o"}};
  for (const auto& [ours, theirs] : projections) {
    l.measured_s += measured_gemm_s(theirs);
    l.model_s += model_fwd_bwd_s(op_named(p, ours), g);
  }
  l.measured_s += h200()["attention"][0]["fwd_bwd_s"].get<double>();  // 128 heads, S 4096, d 192/128
  l.model_s += model_fwd_bwd_s(op_named(p, "core_attention"), g);
  const double rmsnorm_s = h200()["memory"][1]["s"].get<double>();    // rmsnorm_4096x7168
  l.measured_s += rmsnorm_s;
  l.model_s += cost::op_cost(op_named(p, "input_norm"), model::Pass::forward, Precision::bf16, g, test::default_calibration()).gpu_seconds;
  return l;
}

double error(const Layer& l) { return l.model_s / l.measured_s - 1; }

}  // namespace

TEST_CASE("H200 GEMMs: the calibrated model within 12 % RMS of the 100 measured shapes", "[cost][components]") {
  const GpuSpec g = gpu("h200");
  double sum_sq = 0;
  int n = 0;
  auto check = [&](double m, double k, double n_out, double measured_s, Precision p) {
    const double e = std::log(cost::gemm_time(m, k, n_out, 1, p, g, test::default_calibration().of(g)).seconds / measured_s);
    sum_sq += e * e;
    ++n;
  };
  for (const auto& x : h200()["gemm_bf16"]) {
    if (x["name"] == "square_8192") continue;  // left out of the fit (see kernels.json)
    const double M = x["M"], K = x["K"], N = x["N"];
    check(M, K, N, x["fwd_s"], Precision::bf16);
    check(M, N, K, x["dgrad_s"], Precision::bf16);  // M x K reduced over N
    check(K, M, N, x["wgrad_s"], Precision::bf16);  // K x N reduced over M
  }
  for (const auto& x : h200()["gemm_fp8"]) {
    if (x["name"] == "square_8192") continue;
    check(x["M"], x["K"], x["N"], x["fwd_s"], Precision::fp8);
  }
  CHECK(n == 100);
  const double rms = std::sqrt(sum_sq / n);
  INFO("RMS log error " << rms);
  CHECK(rms < 0.12);
}

TEST_CASE("H200 attention within 25 % per shape, forward and backward", "[cost][components]") {
  const GpuSpec g = gpu("h200");
  for (const auto& a : h200()["attention"]) {
    model::Op op;
    op.kind = model::OpKind::attention;
    op.attention_sequences = 1;
    op.attention_heads = a["heads"];
    op.attention_seq_len = a["seq"];
    op.attention_qk_dim = a["d_qk"];
    op.attention_v_dim = a["d_v"];
    op.low_precision = false;
    const double fwd = cost::op_cost(op, model::Pass::forward, Precision::bf16, g, test::default_calibration()).gpu_seconds;
    const double bwd = cost::op_cost(op, model::Pass::backward, Precision::bf16, g, test::default_calibration()).gpu_seconds;
    const double measured_fwd = a["fwd_s"], measured_bwd = a["fwd_bwd_s"].get<double>() - measured_fwd;
    INFO("d_qk " << a["d_qk"] << " d_v " << a["d_v"]);
    CHECK(std::abs(fwd / measured_fwd - 1) < 0.25);
    CHECK(std::abs(bwd / measured_bwd - 1) < 0.25);
  }
}

TEST_CASE("H200 DeepSeek-V3 layers composed of the measured kernels within 10 %", "[cost][components]") {
  const GpuSpec g = gpu("h200");
  SECTION("MLA alone") {
    const Layer l = mla(dsv3_layer(32, true), g);
    INFO("measured " << l.measured_s * 1e3 << " ms, model " << l.model_s * 1e3 << " ms");
    CHECK(std::abs(error(l)) < 0.10);
  }
  SECTION("dense layer: MLA, pre-MLP RMSNorm, dense SwiGLU FFN GEMMs") {
    const model::LayerProgram p = dsv3_layer(32, false);
    Layer l = mla(p, g);
    l.measured_s += measured_gemm_s("dense_gate_up") + measured_gemm_s("dense_down") + h200()["memory"][1]["s"].get<double>();
    l.model_s += model_fwd_bwd_s(op_named(p, "mlp_gate_up"), g) + model_fwd_bwd_s(op_named(p, "mlp_down"), g) +
                 cost::op_cost(op_named(p, "pre_mlp_norm"), model::Pass::forward, Precision::bf16, g, test::default_calibration())
                     .gpu_seconds;
    INFO("measured " << l.measured_s * 1e3 << " ms, model " << l.model_s * 1e3 << " ms");
    CHECK(std::abs(error(l)) < 0.10);
  }
  SECTION("MoE layer at 4, 8 and 32 local experts, and the expert-count effect") {
    // Measured: the per-expert GEMMs one after another (forward, data and weight gradient), so
    // the model runs them that way too, on one stream (Megatron's Transformer Engine overlaps
    // four; see the grouped-GEMM test below).
    cost::KernelCalibration sequential = test::default_calibration();
    sequential.architectures.at(g.architecture).grouped_gemm_streams = 1;
    auto model_grouped_s = [&](const model::Op& op) {
      return cost::op_cost(op, model::Pass::forward, Precision::bf16, g, sequential).gpu_seconds +
             cost::op_cost(op, model::Pass::backward, Precision::bf16, g, sequential).gpu_seconds;
    };
    std::map<int, Layer> layers;
    for (const auto& [local, tokens] : std::vector<std::pair<int, int>>{{4, 8192}, {8, 4096}, {32, 1024}}) {
      const model::LayerProgram p = dsv3_layer(256 / local, true);
      Layer l = mla(p, g);
      l.measured_s += measured_gemm_s("router") + measured_gemm_s("shared_gate_up") + measured_gemm_s("shared_down") +
                      h200()["memory"][1]["s"].get<double>();
      l.model_s += model_fwd_bwd_s(op_named(p, "router"), g) + model_fwd_bwd_s(op_named(p, "shared_gate_up"), g) +
                   model_fwd_bwd_s(op_named(p, "shared_down"), g) +
                   cost::op_cost(op_named(p, "pre_mlp_norm"), model::Pass::forward, Precision::bf16, g, test::default_calibration())
                       .gpu_seconds;
      const std::string m = "_m" + std::to_string(tokens);
      l.measured_s += local * (measured_gemm_s("expert_gate_up" + m) + measured_gemm_s("expert_down" + m));
      const model::Op& up = op_named(p, "expert_gate_up");
      REQUIRE(up.groups == local);
      REQUIRE(up.m == tokens);
      l.model_s += model_grouped_s(up) + model_grouped_s(op_named(p, "expert_down"));
      INFO(local << " local experts: measured " << l.measured_s * 1e3 << " ms, model " << l.model_s * 1e3 << " ms");
      CHECK(std::abs(error(l)) < 0.10);
      layers[local] = l;
    }
    // More, smaller experts are slower in both (the measured layer: 32 vs 8 experts).
    const double measured_ratio = layers[32].measured_s / layers[8].measured_s;
    const double model_ratio = layers[32].model_s / layers[8].model_s;
    INFO("32 vs 8 local experts: measured x" << measured_ratio << ", model x" << model_ratio);
    CHECK(measured_ratio > 1.05);
    CHECK(model_ratio > 1.0);
    CHECK(std::abs(model_ratio / measured_ratio - 1) < 0.10);
  }
}

TEST_CASE("a skinny GEMM takes the time of streaming its operands and output through HBM", "[cost]") {
  // 16 tokens through a 8192 x 8192 BF16 weight: 4 MFLOP per weight element read is far below any
  // GPU's FLOP-per-byte ridge, so the weight's trip through HBM sets the time, plus the kernel's
  // fixed cost (closed form, no tolerance beyond rounding).
  for (const char* name : {"h200", "gb200", "gb300"}) {
    const GpuSpec g = gpu(name);
    const cost::ArchitectureCalibration& arch = test::default_calibration().of(g);
    const double m = 16, k = 8192, n = 8192;
    const double bytes = (m * k + k * n) * 2 + m * n * 2;
    const cost::GemmTime t = cost::gemm_time(m, k, n, 1, Precision::bf16, g, arch);
    INFO(name << ": " << t.seconds * 1e6 << " us");
    CHECK(t.bound == cost::Bound::memory);
    CHECK(t.seconds == Approx(bytes / (g.hbm_bytes_per_s * arch.copy_hbm_efficiency) + arch.gemm_fixed_s).epsilon(1e-9));
  }
}

TEST_CASE("sustained clocks follow their published best-shape GEMM rates", "[cost][components]") {
  // Each clock (configs/hardware) is the published rate / (SMs x FLOP per clock x K / (K + k_overhead)).
  struct Anchor {
    const char* gpu;
    Precision p;
    double k, tflops;
  };
  const Anchor anchors[] = {
      {"b200", Precision::bf16, 3072, 1745},    {"b200", Precision::fp8, 3072, 3432.5},  // MAMF
      {"b200", Precision::nvfp4, 8192, 5370},                                            // TAO2427
      {"b300", Precision::bf16, 1024, 1769},    {"b300", Precision::fp8, 7168, 3353.3},  // MAMF
      {"gb200", Precision::bf16, 2048, 1822},   {"gb200", Precision::fp8, 1536, 3615.6}, // MAMF
      {"gb200", Precision::nvfp4, 16384, 7627.6},                                        // AZ-GB200
      {"gb300", Precision::bf16, 16384, 2174},                                           // TLX-PWR
  };
  for (const Anchor& a : anchors) {
    const GpuSpec g = gpu(a.gpu);
    const double k_overhead = test::default_calibration().of(g).k_overhead;
    const double clock = a.tflops * 1e12 / (g.sm_count * g.tensor_flop_per_clock_per_sm(a.p) * a.k / (a.k + k_overhead));
    INFO(a.gpu << " " << to_string(a.p));
    CHECK(g.sustained_clock_hz(a.p) == Approx(clock).epsilon(0.002));
  }
  // GB300's FP8 clock: GB200's FP8/BF16 clock ratio (no GB300 FP8 measurement).
  const GpuSpec gb200 = gpu("gb200"), gb300 = gpu("gb300");
  CHECK(gb300.sustained_clock_hz_fp8 / gb300.sustained_clock_hz_bf16 ==
        Approx(gb200.sustained_clock_hz_fp8 / gb200.sustained_clock_hz_bf16).epsilon(0.002));
}

TEST_CASE("Blackwell BF16 GEMMs run at the sustained rate of large GEMMs, not at a sweep's best", "[cost][components]") {
  // TAO2427: B200 BF16 torch.mm at 8192^3, back to back, 1.42 PFLOP/s (the source of the
  // mainloop efficiency, so held to 1 %). TLX-PWR: GB300 cuBLAS GEMMs at the 1,400 W limit
  // 1,600-2,174 TFLOP/s (a prediction: a large GEMM inside that range). MAMF's best shapes, which
  // set the clocks, stay reachable only where the efficiency is 1: Hopper, whose clock and GEMM
  // fit are measured H200 kernels.
  auto bf16_tflops = [](const GpuSpec& g, double size) {
    const auto t = cost::gemm_time(size, size, size, 1, Precision::bf16, g, test::default_calibration().of(g));
    return 2.0 * size * size * size / t.seconds / 1e12;
  };
  const GpuSpec b200 = gpu("b200"), gb300 = gpu("gb300");
  CHECK(bf16_tflops(b200, 8192) == Approx(1420).epsilon(0.01));
  const double gb300_tflops = bf16_tflops(gb300, 16384);
  INFO("GB300 BF16 16384^3: " << gb300_tflops << " TFLOP/s");
  CHECK(gb300_tflops > 1600);
  CHECK(gb300_tflops < 2174);
  CHECK(test::default_calibration().of(gpu("h200")).mainloop_efficiency.count(Precision::bf16) == 0);
}

TEST_CASE("TE's B300 GEMM benchmark: a 5B model's BF16 forward GEMMs, predicted", "[cost][components]") {
  // TE-GP (Transformer Engine's GEMM profiling tutorial, B300 SXM6 AC, cuBLAS through TE, CUDA
  // events over 100 iterations): M = 15,872 tokens, hidden 4,096, intermediate 16,384. Not a
  // source of any figure in configs/: a prediction of the BF16 efficiency taken from B200,
  // held to 5 % on the layer's four forward GEMMs and 10 % on each large one.
  const GpuSpec b300 = gpu("b300");
  const auto& arch = test::default_calibration().of(b300);
  struct Shape {
    double m, k, n, published_ms;
  };
  const Shape shapes[] = {{15872, 4096, 12288, 1.071}, {15872, 4096, 4096, 0.307},
                          {15872, 4096, 16384, 1.393}, {15872, 16384, 4096, 1.426}};
  double model_ms = 0, published_ms = 0;
  for (const Shape& s : shapes) {
    const double ms = cost::gemm_time(s.m, s.k, s.n, 1, Precision::bf16, b300, arch).seconds * 1e3;
    INFO(s.m << "x" << s.k << "x" << s.n << ": moesim " << ms << " ms, published " << s.published_ms);
    if (s.k * s.n >= 4096.0 * 12288) CHECK(ms == Approx(s.published_ms).epsilon(0.10));
    model_ms += ms;
    published_ms += s.published_ms;
  }
  CHECK(model_ms == Approx(published_ms).epsilon(0.05));
}

TEST_CASE("Blackwell anchors: MXFP8 grouped GEMM, cuDNN attention at DeepSeek-V3's shape", "[cost][components]") {
  const GpuSpec gb200 = gpu("gb200"), gb300 = gpu("gb300"), b200 = gpu("b200");
  SECTION("MLM-G §1: MXFP8 grouped GEMM on GB200, 2,672 TFLOP/s at K = 7168, N = 2048") {
    // DeepSeek-V3 at EP32: 8 local experts of 4096 tokens.
    const auto t = cost::gemm_time(4096, 7168, 2048, 8, Precision::mxfp8, gb200, test::default_calibration().of(gb200));
    CHECK(2.0 * 8 * 4096 * 7168 * 2048 / t.seconds / 1e12 == Approx(2672).epsilon(0.01));
  }
  model::Op att;
  att.kind = model::OpKind::attention;
  att.attention_sequences = 1;
  att.attention_heads = 128;
  att.attention_seq_len = 4096;
  att.attention_qk_dim = 192;
  att.attention_v_dim = 128;
  SECTION("CUDNN-FE: cuDNN 9.26 at DeepSeek-V3's shape, GB200 the source, GB300 predicted") {
    // Causal, batch 2, 128 heads, S = 4,096, d_qk 192, d_v 128; published times in ms. GB200's
    // four and GB300's MXFP8 forward give the efficiencies (configs/calibration/kernels.json);
    // GB300's other three are predictions, held to 10 %.
    att.attention_sequences = 2;
    struct Row {
      const GpuSpec* gpu;
      bool mxfp8;
      model::Pass pass;
      double published_ms;
      bool source;
    };
    const model::Pass F = model::Pass::forward, B = model::Pass::backward;
    const Row rows[] = {{&gb200, false, F, 0.944, true}, {&gb200, false, B, 3.262, true},
                        {&gb200, true, F, 0.679, true},  {&gb200, true, B, 2.505, true},
                        {&gb300, true, F, 0.540, true},  {&gb300, false, F, 0.812, false},
                        {&gb300, false, B, 3.090, false}, {&gb300, true, B, 2.294, false}};
    for (const Row& r : rows) {
      att.low_precision = r.mxfp8;
      const auto c = cost::op_cost(att, r.pass, r.mxfp8 ? Precision::mxfp8 : Precision::bf16, *r.gpu, test::default_calibration());
      INFO(r.gpu->name << (r.mxfp8 ? " MXFP8 " : " BF16 ") << (r.pass == F ? "forward" : "backward") << ": moesim "
                       << c.gpu_seconds * 1e3 << " ms, published " << r.published_ms);
      CHECK(c.gpu_seconds * 1e3 == Approx(r.published_ms).epsilon(r.source ? 0.005 : 0.10));
    }
    // GB200's MXFP8 forward is bound by its SFUs, GB300's (doubled SFUs) by its tensor cores.
    att.low_precision = true;
    CHECK(cost::op_cost(att, F, Precision::mxfp8, gb200, test::default_calibration()).bound == cost::Bound::exponential);
    CHECK(cost::op_cost(att, F, Precision::mxfp8, gb300, test::default_calibration()).bound == cost::Bound::tensor);
  }
  SECTION("CUDNN-FE: older cuDNN at DeepSeek-V3's shape, as each release ships it") {
    // BF16, one sequence, deterministic backward; published ms per version (9.26: the calibrated
    // one). Each release prices attention with the newest measured version at or below its own.
    struct Row {
      const GpuSpec* gpu;
      const char* stack_version;
      double forward_ms, backward_ms;
    };
    const Row rows[] = {{&gb200, "9.18.0", 0.519, 1.650}, {&gb200, "9.20.0", 0.509, 1.613},
                        {&gb200, "9.13.1", 0.519, 1.650}, {&gb200, "9.26", 0.472, 1.631},
                        {&gb200, "", 0.472, 1.631},       {&gb300, "9.18.0", 0.438, 1.541},
                        {&gb300, "9.19", 0.454, 1.544},   {&gb300, "10.1", 0.406, 1.483}};
    att.low_precision = false;
    for (const Row& r : rows) {
      cost::KernelCalibration cal = test::default_calibration();
      cost::use_cudnn_version(cal, r.stack_version);
      const double f = cost::op_cost(att, model::Pass::forward, Precision::bf16, *r.gpu, cal).gpu_seconds;
      const double b = cost::op_cost(att, model::Pass::backward, Precision::bf16, *r.gpu, cal).gpu_seconds;
      INFO(r.gpu->name << " cuDNN '" << r.stack_version << "': " << f * 1e3 << " / " << b * 1e3 << " ms");
      // The calibrated version's times within 0.5 % (GB200 the source) and 10 % (GB300 predicted);
      // each version over it exactly as published.
      CHECK(f * 1e3 == Approx(r.forward_ms).epsilon(r.gpu == &gb200 ? 0.005 : 0.10));
      CHECK(b * 1e3 == Approx(r.backward_ms).epsilon(r.gpu == &gb200 ? 0.005 : 0.10));
      cost::KernelCalibration calibrated = test::default_calibration();
      const double f0 = cost::op_cost(att, model::Pass::forward, Precision::bf16, *r.gpu, calibrated).gpu_seconds;
      const double b0 = cost::op_cost(att, model::Pass::backward, Precision::bf16, *r.gpu, calibrated).gpu_seconds;
      const double f_926 = r.gpu == &gb200 ? 0.472 : 0.406, b_926 = r.gpu == &gb200 ? 1.631 : 1.483;
      CHECK(f / f0 == Approx(r.forward_ms / f_926).epsilon(1e-3));
      CHECK(b / b0 == Approx(r.backward_ms / b_926).epsilon(1e-3));
    }
    // MXFP8 attention needs 9.19 or later at this shape: its measured times are not scaled.
    cost::KernelCalibration cal = test::default_calibration();
    cost::use_cudnn_version(cal, "9.18.0");
    att.low_precision = true;
    CHECK(cost::op_cost(att, model::Pass::forward, Precision::mxfp8, gb300, cal).gpu_seconds ==
          cost::op_cost(att, model::Pass::forward, Precision::mxfp8, gb300, test::default_calibration()).gpu_seconds);
    CHECK_THROWS_AS(cost::use_cudnn_version(cal, "nine"), std::invalid_argument);
    // A run loads the calibration with its stack's cuDNN.
    Scenario s = test::record_gb300();
    s.stack.cudnn_version = "9.18.0";
    driver::RunOptions o;
    o.configs_dir = test::configs_dir().string();
    CHECK(driver::load_kernel_calibration(s, o).of(gb300).attention_forward_time_ratio_bf16 == Approx(0.438 / 0.406).epsilon(1e-3));
  }
  SECTION("element-wise HBM efficiency: the H200 RMSNorm scaled by the generations' streaming") {
    // 0.51 (H200 RMSNorm, measured) x (GB200 7.35 of 8 TB/s, AZ-BLOG) / (H200 4.01 of 4.8 TB/s,
    // AZ-H200).
    const double derived = 2448.3 / 4800 * (7.35 / 8) / (4.01 / 4.8);
    CHECK(test::default_calibration().of(b200).elementwise_hbm_efficiency == Approx(derived).epsilon(0.01));
    CHECK(test::default_calibration().of(gb300).elementwise_hbm_efficiency == Approx(derived).epsilon(0.01));
    // TAO-MOE's MXFP8 row-wise cast of a 1.9 GB tensor on B200 (580.6 us) streams faster than a
    // training-shape norm: the model takes 14 % longer for it.
    const double bytes = 131072.0 * 7168 * (2 + 1 + 1.0 / 32);
    const double s = bytes / (b200.hbm_bytes_per_s * test::default_calibration().of(b200).elementwise_hbm_efficiency);
    CHECK(s > 580.6e-6);
    CHECK(s < 1.2 * 580.6e-6);
  }
}

