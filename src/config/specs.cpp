#include "moesim/config/specs.hpp"

namespace moesim {

double GpuSpec::peak_flop_per_s(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return bf16_flop_per_s;
    case Precision::nvfp4: return fp4_flop_per_s;
    default: return fp8_flop_per_s;  // every FP8 flavour runs on the FP8 tensor cores
  }
}

double GpuSpec::tensor_flop_per_clock_per_sm(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return tensor_flop_per_clock_per_sm_bf16;
    case Precision::nvfp4: return tensor_flop_per_clock_per_sm_fp4;
    default: return tensor_flop_per_clock_per_sm_fp8;
  }
}

double GpuSpec::sustained_clock_hz(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return sustained_clock_hz_bf16;
    case Precision::nvfp4: return sustained_clock_hz_fp4;
    default: return sustained_clock_hz_fp8;
  }
}

double GpuSpec::sustained_flop_per_s(Precision p) const {
  return sm_count * tensor_flop_per_clock_per_sm(p) * sustained_clock_hz(p);
}

}  // namespace moesim
