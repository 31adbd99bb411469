// Recognising a measured output by its tool (moesim/calibrate/tool_output.hpp).
#include "moesim/calibrate/tool_output.hpp"

#include "moesim/config/error.hpp"

namespace moesim::calibrate {

ToolOutput parse_tool_output(const std::string& text, const std::string& file, const ToolHints& hints) {
  ToolOutput out;
  if (looks_like_nccl_tests(text)) {
    out.tool = Tool::nccl_tests;
    out.nccl = parse_nccl_tests(text, file, hints.nccl);
  } else if (!dispatcher_tool_of(text).empty()) {
    out.tool = Tool::dispatcher_tests;
    DispatcherTestsHints dispatcher = hints.dispatcher;
    dispatcher.ranks = hints.nccl.ranks;
    out.dispatcher = parse_dispatcher_tests(text, file, dispatcher);
  } else if (looks_like_kernel_table(text)) {
    out.tool = Tool::kernel_table;
    out.kernels = parse_kernel_table(text, file);
  } else {
    throw ConfigError(file, "line 1",
                      "nccl-tests output (its banner \"# Collective test starting:\" or its column header \"#  size  "
                      "count  type ...\"), DeepEP's test output (\"[tuning] Best dispatch ...\"), HybridEP's (\"=== "
                      "Kernel Benchmark (FP8, 32 ranks) ===\") or a kernel timing table (a CSV header with op and "
                      "time_us columns: docs/calibration.md)");
  }
  return out;
}

}  // namespace moesim::calibrate
