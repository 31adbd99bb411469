#pragma once
// Fitting the kernel model to measured kernel times (kernel_tables.hpp): each row priced by the
// model `moesim ops` prints (cost/kernel_model.hpp); the candidates are the software efficiencies
// of the GPU's architecture in configs/calibration/kernels.json (GEMM fixed cost and tile overhead,
// quantised mainloops, flash attention, copies and element-wise kernels) and the GPU's sustained
// clock per tensor-core family (the system's hardware).
#include <vector>

#include "moesim/calibrate/fit.hpp"
#include "moesim/calibrate/kernel_tables.hpp"
#include "moesim/calibrate/nccl_fit.hpp"

namespace moesim::calibrate {

// One table per file and op (and precision): GEMMs of one precision share keys, the attention's
// forward and backward do not. ConfigError naming the row for a shape the model cannot price.
std::vector<MeasuredTable> kernel_measured_tables(const CalibrationTarget& target,
                                                  const std::vector<KernelTable>& tables);

}  // namespace moesim::calibrate
