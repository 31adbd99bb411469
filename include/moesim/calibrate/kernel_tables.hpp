#pragma once
// Kernel timing tables: a CSV with a header row, one measured kernel per row, as a profiler's
// summary exports it once each kernel is named by moesim's op and given its shape (nsys' kernel
// summary, `nsys stats --report cuda_gpu_kern_sum --format csv`, has the times but no shapes: add
// the columns). Columns, in any order, case-insensitive:
//   op         gemm | attention_forward | attention_backward | copy | elementwise
//   precision  bf16 (default) | fp8 | fp8_blockwise | mxfp8 | nvfp4 (GEMMs), bf16 | fp8 (attention)
//   M, K, N, groups        a GEMM out[M, N] = a[M, K] b[K, N], `groups` of them in one kernel (1)
//   sequences, seq, heads, d_qk, d_v   causal flash attention (sequences default 1)
//   bytes                  copies and element-wise kernels: HBM bytes read and written
//   time_us | time_ms | time_ns | Avg (ns) | Med (ns)   the kernel's time
//   name                   optional: the kernel's own name, reported
// Lines starting with '#' are comments.
#include <string>
#include <vector>

namespace moesim::calibrate {

struct KernelRow {
  std::string op, precision = "bf16", name;
  double m = 0, k = 0, n = 0;
  int groups = 1;
  double sequences = 1, seq = 0;
  int heads = 0, d_qk = 0, d_v = 0;
  double bytes = 0;
  double time_us = 0;
  int line = 0;
};

struct KernelTable {
  std::string file;
  std::vector<KernelRow> rows;
};

// Whether the text is a kernel timing table (a header row with an "op" and a time column).
bool looks_like_kernel_table(const std::string& text);

// ConfigError(file, "line N", expected) for a missing column, an unknown op or precision, a shape
// the op needs but the row lacks, a time that is not a positive number.
KernelTable parse_kernel_table(const std::string& text, const std::string& file);

}  // namespace moesim::calibrate
