#include "moesim/config/specs.hpp"

namespace moesim {

double GpuSpec::peak_flop_per_s(Precision p) const {
  switch (p) {
    case Precision::bf16: return bf16_flop_per_s;
    case Precision::fp8:
    case Precision::mxfp8: return fp8_flop_per_s;   // MXFP8 runs on the FP8 tensor cores
    case Precision::fp4: return fp4_flop_per_s;
  }
  return bf16_flop_per_s;
}

}  // namespace moesim
