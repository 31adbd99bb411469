#include "moesim/config/precision.hpp"

#include <iterator>

namespace moesim {

namespace {

constexpr const char* kNames[] = {"bf16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4", "fp4"};
constexpr Precision kValues[] = {Precision::bf16, Precision::fp8, Precision::fp8_blockwise, Precision::mxfp8,
                                 Precision::nvfp4, Precision::nvfp4};

}  // namespace

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::fp8_blockwise: return "fp8_blockwise";
    case Precision::mxfp8: return "mxfp8";
    case Precision::nvfp4: return "nvfp4";
  }
  return "?";
}

bool parse_precision(std::string_view name, Precision& out) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (name == kNames[i]) {
      out = kValues[i];
      return true;
    }
  return false;
}

std::vector<std::string> precision_names() { return {std::begin(kNames), std::end(kNames)}; }

double operand_bytes(Precision p) {
  switch (tensor_family(p)) {
    case Precision::bf16: return 2.0;
    case Precision::nvfp4: return 0.5;
    default: return 1.0;
  }
}

double quantized_bytes(Precision p) {
  switch (p) {
    case Precision::bf16: return 2.0;
    case Precision::fp8: return 1.0;                         // one FP32 scale per tensor
    case Precision::fp8_blockwise: return 1.0 + 4.0 / 128;   // one FP32 scale per 1x128 block
    case Precision::mxfp8: return 1.0 + 1.0 / 32;            // one E8M0 byte per 32 elements
    case Precision::nvfp4: return 0.5 + 1.0 / 16;            // one E4M3 byte per 16 elements
  }
  return 2.0;
}

Precision tensor_family(Precision p) {
  return is_fp8_family(p) ? Precision::fp8 : p;
}

bool is_fp8_family(Precision p) {
  return p == Precision::fp8 || p == Precision::fp8_blockwise || p == Precision::mxfp8;
}

}  // namespace moesim
