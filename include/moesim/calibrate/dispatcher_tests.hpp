#pragma once
// DeepEP's and HybridEP's benchmark outputs as their tests print them:
// - DeepEP (deepseek-ai/DeepEP tests/legacy/test_intranode.py, test_internode.py): "[config]
//   num_tokens=4096, hidden=7168, [num_topk_groups=N, ]num_topk=8" and the tuned best of each
//   kernel, "[tuning] Best dispatch (FP8): SMs 24, NVL chunk 6, 153.00 GB/s (NVL), t: 339.82 us"
//   (internode: "..., RDMA chunk 16: 34 + 1234 us, 43.00 GB/s (RDMA), 140.10 GB/s (NVL)"),
//   "[tuning] Best combine: ...". The rank count is not printed (--ranks).
// - HybridEP (DeepEP branch hybrid-ep, tests/test_hybrid_ep.py): "=== Torch API Benchmark (FP8, 32
//   ranks) ===" with "dispatch (FP8): 392.70 GB/s (NVL), t: 552.3 us [min=..., max=...], ..." and
//   "combine: ..."; "=== Kernel Benchmark (FP8, 32 ranks) ===" with "dispatch kernel (FP8)(NVL):
//   538.86 GB/s, avg_t=402.5 us [...]" and "combine kernel(NVL): ...". Tokens, hidden size, top-k
//   and local experts come from its environment, not the output.
#include <string>
#include <vector>

namespace moesim::calibrate {

struct DispatcherRun {
  std::string kernel;         // "dispatch" or "combine"
  bool fp8 = false;           // the dispatch's tokens; a combine is BF16
  bool torch_api = false;     // HybridEP's Torch API benchmark (the call); false: the kernel alone
  int sms = 0;                // as printed (DeepEP); 0: not printed
  double time_us = 0;         // the kernel's time (DeepEP internode: without the notify kernel)
  double nvl_gbytes_per_s = 0;
  int line = 0;
  std::string what() const;   // "dispatch (FP8)", "combine, Torch API"
};

struct DispatcherTestsOutput {
  std::string file;
  std::string tool;           // "deepep" or "hybridep"
  bool internode = false;     // DeepEP's internode test (RDMA columns)
  int ranks = 0;
  int tokens = 4096, hidden = 7168, topk = 8, experts = 256;
  int groups = 1, topk_groups = 0;  // DeepEP internode: one router group per node, top min(nodes, 4)
  std::vector<DispatcherRun> runs;
};

// What the command line adds where the output is silent (a value the output prints wins): 0 = the
// test's own default.
struct DispatcherTestsHints {
  int ranks = 0;     // DeepEP: required (its tests do not print it)
  int experts = 0;   // DeepEP: 256 (--num-experts' default); HybridEP: 8 per rank (NUM_LOCAL_EXPERTS)
  int sms = 0;       // HybridEP: 24 in one node, 8 across nodes (the library's default)
  int tokens = 0;    // HybridEP: NUM_TOKENS_PER_RANK (4096); DeepEP prints it
  int hidden = 0;    // HybridEP: HIDDEN_DIM (7168)
  int topk = 0;      // HybridEP: TOPK (8)
};

// Whether the text is DeepEP's or HybridEP's test output ("" for neither).
std::string dispatcher_tool_of(const std::string& text);

// Parses one output; ConfigError(file, "line N", expected) for a line it cannot read, no measured
// kernel, or a rank count neither printed nor given.
DispatcherTestsOutput parse_dispatcher_tests(const std::string& text, const std::string& file,
                                             const DispatcherTestsHints& hints = {});

}  // namespace moesim::calibrate
