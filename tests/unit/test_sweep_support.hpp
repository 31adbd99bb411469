#pragma once
// Helpers for the sweep tests: a small sweep over the record scenario whose points are mostly
// cheap (invalid or infeasible: no simulation), and byte comparison of output directories.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "config_test_support.hpp"
#include "scenario_fixtures.hpp"
#include "moesim/sweep/result.hpp"

namespace moesim::test {

// 6 points: precision {mxfp8, fp7 (invalid)} x GPUs {256, 512, 20000 (more than the system
// holds: infeasible)}; only two are simulated.
inline std::filesystem::path small_sweep(const TempTree& tree) {
  const std::string record = (source_dir() / "scenarios" / "gb300-256-record.json").string();
  return tree.write("sweeps/small.json", R"({
    "name": "small, test",
    "description": "two simulated points, four that fail before simulating",
    "base": ")" + record + R"(",
    "axes": [
      {"path": "training.precision", "values": ["mxfp8", "fp7"], "name": "precision_axis"},
      {"gpus": [256, 512, 20000], "mode": "weak"}
    ]
  })");
}

// The files every sweep output directory has, equal byte for byte.
inline void require_same_outputs(const std::filesystem::path& a, const std::filesystem::path& b) {
  for (const char* name : {"sweep.json", "sweep.csv", "sweep.md"}) {
    INFO(name);
    REQUIRE(read_text(a / name) == read_text(b / name));
  }
}

// Results made by hand: series a and b at 256 and 512 GPUs; b at 512 is invalid.
inline sweep::SweepResult synthetic_result() {
  sweep::SweepResult r;
  r.name = "synthetic";
  r.point_count = 4;
  r.axis_columns = {"label", "gpus"};
  r.gpu_column = "gpus";
  r.gpu_scaling = "weak";
  const struct {
    const char* label;
    int gpus;
    double tflops;  // 0: the point is invalid
  } points[] = {{"a", 256, 1000}, {"a", 512, 990}, {"b", 256, 1200.5}, {"b", 512, 0}};
  for (int i = 0; i < 4; ++i) {
    sweep::Point p;
    p.index = i;
    p.axis_values = {{"label", points[i].label}, {"gpus", points[i].gpus}};
    sweep::Json row = sweep::failed_row(p, "invalid", "bad, \"quoted\" | piped");
    if (points[i].tflops > 0) {
      row["status"] = "ok";
      row["reason"] = "";
      row["gpu_count"] = points[i].gpus;
      row["tflops_per_gpu"] = points[i].tflops;
      row["step_time_s"] = 10.0;
      for (const char* c : {"tp", "cp", "pp", "vpp", "ep", "dp"}) row[c] = 1;
      row["max_memory_per_gpu_bytes"] = 100e9;
      row["usable_memory_per_gpu_bytes"] = 150e9;
      row["fits_in_memory"] = true;
      row["compute_s"] = 9.0;
      row["bubble_s"] = 1.0;
      row["tokens_per_kwh"] = 1000 * points[i].tflops;
    }
    r.rows.push_back(row);
  }
  sweep::fill_scaling_efficiency(r);
  return r;
}

}  // namespace moesim::test
