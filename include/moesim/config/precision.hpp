#pragma once
#include <string>
#include <string_view>

namespace moesim {

// Numeric format of the GEMMs. mxfp8 is Blackwell's block-scaled FP8 (same peak as FP8).
enum class Precision { bf16, fp8, mxfp8, fp4 };

std::string_view to_string(Precision p);
// Returns false when the name is not a precision.
bool parse_precision(std::string_view name, Precision& out);
// Bytes per element of the GEMM operands in this precision (bf16: 2, fp8/mxfp8: 1, fp4: 0.5).
double operand_bytes(Precision p);

}  // namespace moesim
