#pragma once
// A calibration overlay: what a user measured on their own cluster (`moesim calibrate`,
// docs/calibration.md), as overrides of one bundled system and of the dispatcher kernels measured
// on it, layered over every scenario that runs on that system. It names each key it sets and
// carries each one's source (the fit); nothing else moves. A scenario's own overrides of the same
// keys still win: the overlay is a base layer.
#include <map>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/specs.hpp"

namespace moesim::config {

// The version `moesim calibrate` writes and this reader accepts ("moesim_calibration").
inline constexpr int kCalibrationFormat = 1;

struct CalibrationOverlay {
  std::filesystem::path file;
  std::string system;               // the name in configs/systems/ it calibrates
  // {"nccl": {...}, "sources": {...}}: merged like a reference's; empty: the system as bundled.
  nlohmann::json system_overrides = nlohmann::json::object();
  // configs/dispatchers/<name> -> {"dispatch": {...}, "sources": {...}}: DeepEP or HybridEP as
  // measured on this system, for every stack that ships that file.
  std::map<std::string, nlohmann::json> dispatcher_overrides;
  // configs/calibration/kernels.json's keys it sets ("architectures.hopper.gemm.fixed_us" -> value)
  // and their sources; checked against that file where it is loaded (the cost stage reads it).
  std::map<std::string, double> kernels;
  std::map<std::string, std::string> kernel_sources;
  // Every key it sets: "nccl.nvlink_efficiency", "dispatchers.deepep.dispatch.nvlink_efficiency",
  // "kernels.architectures.hopper.gemm.fixed_us".
  std::vector<std::string> keys;
};

// Reads and checks an overlay; ConfigError naming the file and the JSON path. The overrides are
// checked against the system they patch (unknown keys, ranges, every key with its source).
CalibrationOverlay read_calibration_overlay(const std::filesystem::path& file,
                                            const std::filesystem::path& configs_dir);

// The overlay of the system named `system` (a name in configs/systems/), or nullptr. Two
// overlays for one system are refused (ConfigError on the second).
const CalibrationOverlay* overlay_for(const std::string& system, const std::vector<CalibrationOverlay>& overlays);

// Patches the scenario's "system" (and its "stack"'s dispatchers) with the overlay for that
// system, if one is given; returns the overlay applied or nullptr (overlay_for's choice).
const CalibrationOverlay* apply_calibration(nlohmann::json& scenario, const std::vector<CalibrationOverlay>& overlays,
                                            const std::filesystem::path& configs_dir);

// The overrides of the stack `stack` that layer the overlay's dispatchers under `own` (the
// stack's own overrides, {} for none): the slots (deepep, hybridep) whose file the overlay
// calibrates become {"base": file, ...the overlay's keys, ...own's}.
nlohmann::json calibrated_stack_overrides(const CalibrationOverlay& overlay, const std::string& stack,
                                          const nlohmann::json& own, const std::filesystem::path& configs_dir);

// The name a scenario's "system" or "stack" references (a name, or {"base": name, ...}); "" for
// neither.
std::string referenced_name(const nlohmann::json& scenario, const char* kind);

// configs/systems/<name>.json (configs/stacks/) with overrides merged in (the overlay's, or none).
SystemSpec load_system_with(const std::string& name, const std::filesystem::path& configs_dir,
                            const nlohmann::json& overrides);
StackSpec load_stack_with(const std::string& name, const std::filesystem::path& configs_dir,
                          const nlohmann::json& overrides);

}  // namespace moesim::config
