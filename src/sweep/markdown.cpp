// sweep.md: the columns a reader compares at a glance; sweep.csv has all of them.
#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

std::string number(const Json& v, const char* spec, double scale = 1) {
  return v.is_number() ? fmt::format(fmt::runtime(spec), v.get<double>() * scale) : "–";
}

std::string layout_cell(const Json& row) {
  if (!row["tp"].is_number()) return "–";
  std::string out = fmt::format("TP{} PP{} VPP{} EP{} DP{}", row["tp"].get<int>(), row["pp"].get<int>(),
                                row["vpp"].get<int>(), row["ep"].get<int>(), row["dp"].get<int>());
  if (row["cp"].get<int>() > 1) out += fmt::format(" CP{}", row["cp"].get<int>());
  if (row["schedule"].is_string() && row["schedule"] != "1f1b") out += " " + row["schedule"].get<std::string>();
  return out;
}

std::string memory_cell(const Json& row) {
  if (!row["max_memory_per_gpu_bytes"].is_number()) return "–";
  return fmt::format("{:.1f} / {:.1f}{}", row["max_memory_per_gpu_bytes"].get<double>() / 1e9,
                     row["usable_memory_per_gpu_bytes"].get<double>() / 1e9,
                     row["fits_in_memory"].get<bool>() ? "" : " **does not fit**");
}

}  // namespace

std::string result_markdown(const SweepResult& r) {
  std::string out = fmt::format("# {}\n\n", md_cell(r.name));
  if (!r.description.empty()) out += r.description + "\n\n";
  out += fmt::format("{} points", r.point_count);
  if (r.shard) out += fmt::format("; shard {}/{} ({} of them)", r.shard->index, r.shard->count, r.rows.size());
  if (!r.gpu_column.empty()) out += fmt::format("; {} scaling over `{}`", r.gpu_scaling, r.gpu_column);
  out += ". TFLOP/s: model FLOPs per GPU (Megatron convention); MFU against the precision's dense peak; "
         "efficiency: TFLOP/s per GPU relative to the first GPU count of the same series; memory: the "
         "fullest GPU against usable HBM (GB); tokens/kWh: GPUs and the rest of their nodes (docs/method.md).\n\n";

  // Numbers right-aligned, names left.
  std::vector<std::pair<std::string, bool>> header{{"#", true}};
  for (const std::string& c : r.axis_columns) header.emplace_back(md_cell(c), false);
  for (const char* c : {"status", "GPUs", "layout", "TFLOP/s/GPU", "tokens/s/GPU", "MFU %", "step (s)",
                        "efficiency %", "memory (GB)", "tokens/kWh"})
    header.emplace_back(c, std::string(c) != "status" && std::string(c) != "layout");
  std::string names = "|", rule = "|";
  for (const auto& [name, right] : header) {
    names += " " + name + " |";
    rule += right ? "---:|" : "---|";
  }
  out += names + "\n" + rule + "\n";
  for (const Json& row : r.rows) {
    std::vector<std::string> cells{plain_value(row["index"])};
    for (const std::string& c : r.axis_columns) cells.push_back(md_cell(plain_value(row[c])));
    cells.push_back(plain_value(row["status"]));
    cells.push_back(row["gpu_count"].is_number() ? plain_value(row["gpu_count"]) : "–");
    cells.push_back(layout_cell(row));
    cells.push_back(number(row["tflops_per_gpu"], "{:.1f}"));
    cells.push_back(number(row["tokens_per_s_per_gpu"], "{:.0f}"));
    cells.push_back(number(row["mfu"], "{:.1f}", 100));
    cells.push_back(number(row["step_time_s"], "{:.3f}"));
    cells.push_back(number(row["scaling_efficiency"], "{:.1f}", 100));
    cells.push_back(memory_cell(row));
    cells.push_back(number(row["tokens_per_kwh"], "{:.0f}"));
    out += "| " + fmt::format("{}", fmt::join(cells, " | ")) + " |\n";
  }

  std::string notes;
  for (const Json& row : r.rows)
    if (!has_status(row, kStatusOk))
      notes += fmt::format("- point {} ({}): {}: {}\n", plain_value(row["index"]), md_cell(point_name(r.axis_columns, row)),
                           plain_value(row["status"]), md_cell(plain_value(row["reason"])));
  if (!notes.empty()) out += "\nPoints without a result:\n\n" + notes;
  return out;
}

}  // namespace moesim::sweep
