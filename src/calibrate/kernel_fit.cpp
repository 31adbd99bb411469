// Kernel timing tables as tables of the shared fit (moesim/calibrate/kernel_fit.hpp).
#include "moesim/calibrate/kernel_fit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <utility>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"

namespace moesim::calibrate {

namespace {

using nlohmann::json;

Precision precision_named(const std::string& name) {
  Precision p = Precision::bf16;
  parse_precision(name, p);  // the table's reader allowed only names it knows
  return p;
}

// The dotted leaves of a layer ({"architectures": {"hopper": {"gemm": {"fixed_us": 8}}}}).
void flatten(const json& layer, const std::string& prefix, std::map<std::string, double>& out) {
  for (const auto& [name, value] : layer.items()) {
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object()) flatten(value, key, out);
    else out[key] = value.get<double>();
  }
}

Pricing price(const CalibrationTarget& target, const std::string& file, const std::vector<KernelRow>& rows,
              const json& overrides) {
  const SystemSpec system =
      config::load_system_with(target.system, target.configs_dir, overrides.value("system", json::object()));
  std::map<std::string, double> values;
  flatten(overrides.value("kernels", json::object()), "", values);
  std::map<std::string, std::string> sources;
  for (const auto& [key, value] : values) sources[key] = "moesim calibrate: a value the fit tries";
  const cost::KernelCalibration cal =
      cost::load_calibration(cost::default_calibration_file(target.configs_dir), values, sources, "moesim calibrate");
  const GpuSpec& gpu = system.gpu;
  Pricing p;
  for (const KernelRow& r : rows) {
    const Precision precision = precision_named(r.precision);
    double seconds = 0;
    if (r.op == "gemm") {
      seconds = cost::gemm_time(r.m, r.k, r.n, r.groups, precision, gpu, cal.of(gpu)).seconds;
    } else if (r.op == "copy") {
      seconds = r.bytes / (gpu.hbm_bytes_per_s * cal.of(gpu).copy_hbm_efficiency);
    } else {
      model::Op op;
      op.name = r.name;
      if (r.op == "elementwise") {
        op.kind = model::OpKind::memory;
        op.bytes = r.bytes;
      } else {
        op.kind = model::OpKind::attention;
        op.attention_sequences = r.sequences;
        op.attention_seq_len = r.seq;
        op.attention_heads = r.heads;
        op.attention_qk_dim = r.d_qk;
        op.attention_v_dim = r.d_v;
      }
      const model::Pass pass = r.op == "attention_backward" ? model::Pass::backward : model::Pass::forward;
      seconds = cost::op_cost(op, pass, precision, gpu, cal).gpu_seconds;
    }
    if (!(seconds > 0) || !std::isfinite(seconds))
      throw ConfigError(file, fmt::format("line {}", r.line),
                        fmt::format("a kernel {} can price on {} (its time came out {})", r.op, target.system, seconds));
    p.seconds.push_back(seconds);
    p.notes.emplace_back(r.name);
  }
  return p;
}

// The keys a table of `op` in `precision` may move, with their bundled values and ranges.
std::vector<Candidate> candidates(const std::string& op, Precision precision, const GpuSpec& gpu,
                                  const cost::ArchitectureCalibration& arch) {
  const std::string a = "architectures." + gpu.architecture;
  std::vector<Candidate> c;
  const auto kernel_key = [&](const std::string& key, double bundled, Term term, double lower, double upper) {
    if (bundled > 0 || term == Term::fixed) c.push_back({"kernels", a + "." + key, bundled, term, lower, upper});
  };
  if (op == "gemm") {
    const Precision family = tensor_family(precision);
    const double clock = family == Precision::bf16 ? gpu.sustained_clock_hz_bf16
                         : family == Precision::fp8 ? gpu.sustained_clock_hz_fp8
                                                    : gpu.sustained_clock_hz_fp4;
    if (clock > 0)
      c.push_back({"system", "gpu.sustained_clock_mhz." + std::string(to_string(family)), clock / 1e6, Term::bandwidth, 100, 5000});
    if (const auto it = arch.mainloop_efficiency.find(precision); it != arch.mainloop_efficiency.end())
      kernel_key("gemm.mainloop_efficiency." + std::string(to_string(precision)), it->second, Term::bandwidth, 0.01, 1);
    kernel_key("gemm.k_overhead", arch.k_overhead, Term::bandwidth, 0.01, 1e5);
    kernel_key("gemm.fixed_us", arch.gemm_fixed_s * 1e6, Term::fixed, 0, 1e4);
  } else if (op == "attention_forward" || op == "attention_backward") {
    const bool fp8 = tensor_family(precision) == Precision::fp8;
    const std::string pass = op == "attention_forward" ? "forward" : "backward";
    const double bundled = pass == "forward" ? (fp8 ? arch.attention_forward_efficiency_fp8 : arch.attention_forward_efficiency_bf16)
                                             : (fp8 ? arch.attention_backward_efficiency_fp8 : arch.attention_backward_efficiency_bf16);
    kernel_key("attention." + pass + "_efficiency." + (fp8 ? "fp8" : "bf16"), bundled, Term::bandwidth, 0.01, 1);
    kernel_key("attention.exp2_efficiency", arch.exp2_efficiency, Term::bandwidth, 0.01, 1);
  } else if (op == "copy") {
    kernel_key("memory.copy_hbm_efficiency", arch.copy_hbm_efficiency, Term::bandwidth, 0.01, 1);
  } else {
    kernel_key("memory.elementwise_hbm_efficiency", arch.elementwise_hbm_efficiency, Term::bandwidth, 0.01, 1);
  }
  return c;
}

// What orders a table's rows (largest and smallest thirds): its work.
double row_size(const KernelRow& r) {
  if (r.op == "gemm") return 2 * r.m * r.k * r.n * r.groups;
  if (r.op == "copy" || r.op == "elementwise") return r.bytes;
  return r.sequences * r.seq * r.seq * r.heads * (r.d_qk + r.d_v);
}

std::string row_label(const KernelRow& r) {
  if (r.op == "gemm")
    return fmt::format("{}{:.0f}x{:.0f}x{:.0f}", r.groups > 1 ? fmt::format("{}x ", r.groups) : "", r.m, r.k, r.n);
  if (r.op == "copy" || r.op == "elementwise") return fmt::format("{:.0f} B", r.bytes);
  return fmt::format("{}x{:.0f} h{} {}/{}", r.sequences, r.seq, r.heads, r.d_qk, r.d_v);
}

}  // namespace

std::vector<MeasuredTable> kernel_measured_tables(const CalibrationTarget& target,
                                                  const std::vector<KernelTable>& tables) {
  const SystemSpec system = config::load_system(target.system, target.configs_dir);
  const cost::KernelCalibration cal = cost::load_calibration(cost::default_calibration_file(target.configs_dir));
  const cost::ArchitectureCalibration& arch = cal.of(system.gpu);
  std::vector<MeasuredTable> out;
  for (const KernelTable& t : tables) {
    std::map<std::pair<std::string, std::string>, std::vector<KernelRow>> groups;  // (op, precision)
    for (const KernelRow& r : t.rows) groups[{r.op, r.precision}].push_back(r);
    for (const auto& group : groups) {
      const std::string& op = group.first.first;
      const std::string& precision = group.first.second;
      const std::vector<KernelRow>& rows = group.second;  // a variable a lambda can capture
      MeasuredTable m;
      m.file = t.file;
      m.heading = fmt::format("{} kernels in {} on {}", op, precision, system.gpu.name);
      m.what_column = "shape";
      m.note_column = "kernel";
      m.details = {{"file", t.file}, {"tool", "kernel table"}, {"op", op}, {"precision", precision}};
      m.candidates = candidates(op, precision_named(precision), system.gpu, arch);
      for (const KernelRow& r : rows) m.rows.push_back({row_label(r), row_size(r), r.line, r.time_us});
      m.price = [target, file = t.file, rows](const json& overrides) { return price(target, file, rows, overrides); };
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace moesim::calibrate
