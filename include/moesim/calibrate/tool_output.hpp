#pragma once
// One measured output, whichever tool printed it: nccl-tests, DeepEP's or HybridEP's tests, or a
// kernel timing table, recognised from its own text (a banner, a header, a line only that tool
// prints) and read by that tool's reader. `moesim calibrate` and the fuzzer read them this way.
#include <string>

#include "moesim/calibrate/dispatcher_tests.hpp"
#include "moesim/calibrate/kernel_tables.hpp"
#include "moesim/calibrate/nccl_tests.hpp"

namespace moesim::calibrate {

enum class Tool { nccl_tests, dispatcher_tests, kernel_table };

struct ToolHints {
  NcclTestsHints nccl;               // its ranks serve DeepEP's outputs too
  DispatcherTestsHints dispatcher;   // its ranks are taken from nccl.ranks
};

struct ToolOutput {
  Tool tool = Tool::nccl_tests;
  NcclTestsTable nccl;               // the one that `tool` says
  DispatcherTestsOutput dispatcher;
  KernelTable kernels;
};

// ConfigError(file, "line N", expected) for a text no reader recognises or one its reader refuses.
ToolOutput parse_tool_output(const std::string& text, const std::string& file, const ToolHints& hints);

}  // namespace moesim::calibrate
