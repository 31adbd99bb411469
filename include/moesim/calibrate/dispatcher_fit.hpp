#pragma once
// Fitting a dispatcher's kernels (configs/dispatchers/<file>.json) to DeepEP's or HybridEP's
// benchmark outputs measured on a system: each measured kernel priced by the closed form `moesim
// collective --op ep-dispatch|ep-combine` prints, the kernel's efficiencies and per-SM rates as the
// candidates of the shared fit (calibrate/fit.hpp); HybridEP's Torch API lines fit the call's
// share of the kernel bandwidth (torch_api_share) alone.
#include <string>
#include <vector>

#include "moesim/calibrate/dispatcher_tests.hpp"
#include "moesim/calibrate/fit.hpp"
#include "moesim/calibrate/nccl_fit.hpp"

namespace moesim::calibrate {

// The outputs as the shared fit takes them, one table per output, kernel and API; `kernels`
// names the dispatcher file each tool's keys land in ("" = deepep for DeepEP, hybridep for
// HybridEP). ConfigError naming the output when the system cannot run its exchange.
std::vector<MeasuredTable> dispatcher_measured_tables(const CalibrationTarget& target,
                                                      const std::vector<DispatcherTestsOutput>& outputs,
                                                      const std::string& kernels = "");

}  // namespace moesim::calibrate
