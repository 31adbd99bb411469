#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace moesim {

// Numeric format of the transformer GEMMs, with its quantisation recipe (Transformer Engine's
// names in brackets):
//   bf16           no quantisation
//   fp8            FP8 E4M3 with one FP32 scale per tensor from the current amax [Float8CurrentScaling]
//   fp8_blockwise  FP8 with 1x128 activation / 128x128 weight block scales [Float8BlockScaling]
//   mxfp8          FP8 with one E8M0 scale per 32 elements (OCP MX) [MXFP8BlockScaling]
//   nvfp4          FP4 E2M1, one E4M3 scale per 16 elements and one FP32 scale per tensor
//                  [NVFP4BlockScaling]; "fp4" is read as nvfp4
enum class Precision { bf16, fp8, fp8_blockwise, mxfp8, nvfp4 };

// Bytes per element of the unquantised formats that activations, gradients and optimizer states use.
inline constexpr double kBf16Bytes = 2.0;
inline constexpr double kFp32Bytes = 4.0;

std::string_view to_string(Precision p);
// Returns false when the name is not a precision.
bool parse_precision(std::string_view name, Precision& out);
// Every name parse_precision accepts (the alias "fp4" last).
std::vector<std::string> precision_names();
// Bytes per element of the GEMM operands in this precision (bf16: 2, FP8 flavours: 1, nvfp4: 0.5).
double operand_bytes(Precision p);
// Bytes per element of a quantised tensor, its scale factors included (bf16: 2).
double quantized_bytes(Precision p);
// The tensor-core family the GEMMs run on: bf16, fp8 (all FP8 flavours) or nvfp4.
Precision tensor_family(Precision p);
bool is_fp8_family(Precision p);

}  // namespace moesim
