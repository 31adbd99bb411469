#include "moesim/config/precision.hpp"

namespace moesim {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::mxfp8: return "mxfp8";
    case Precision::fp4: return "fp4";
  }
  return "?";
}

bool parse_precision(std::string_view name, Precision& out) {
  for (Precision p : {Precision::bf16, Precision::fp8, Precision::mxfp8, Precision::fp4}) {
    if (name == to_string(p)) {
      out = p;
      return true;
    }
  }
  return false;
}

double operand_bytes(Precision p) {
  switch (p) {
    case Precision::bf16: return 2.0;
    case Precision::fp8:
    case Precision::mxfp8: return 1.0;
    case Precision::fp4: return 0.5;
  }
  return 2.0;
}

}  // namespace moesim
