#pragma once
// Fitting a system's NCCL parameters to nccl-tests tables measured on it: each table's sizes
// priced by the same closed form `moesim collective` prints (driver/collective_request.hpp), the
// system's "nccl" keys as the candidates of the shared fit (calibrate/fit.hpp).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/calibrate/fit.hpp"
#include "moesim/calibrate/nccl_tests.hpp"

namespace moesim::calibrate {

struct CalibrationTarget {
  std::string system;                 // a name in configs/systems/
  std::filesystem::path configs_dir;
  int gpus_per_domain = 0;            // as `moesim collective --gpus-per-domain` (0: whole domains)
};

// The tables as the shared fit takes them. ConfigError naming the table's file when the system
// cannot run its collective (a send-recv of more than 2 ranks, more ranks than the system holds,
// an algorithm that cannot run it).
std::vector<MeasuredTable> nccl_measured_tables(const CalibrationTarget& target,
                                                const std::vector<NcclTestsTable>& tables);

// The tables fitted alone.
Calibration fit_nccl_tables(const CalibrationTarget& target, const std::vector<NcclTestsTable>& tables);

}  // namespace moesim::calibrate
