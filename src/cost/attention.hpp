#pragma once
// Private to src/cost: the flash-attention kernel model (attention.cpp).
#include "moesim/cost/kernel_model.hpp"

namespace moesim::cost {

struct AttentionTime {
  double seconds = 0;
  double flop = 0;
  double clock_hz = 0;
  Bound bound = Bound::tensor;
};

// `family`: the tensor-core family the attention runs in (bf16, or fp8 with FP8 attention).
AttentionTime attention_time(const model::Op& op, model::Pass pass, Precision family, const GpuSpec& gpu,
                             const ArchitectureCalibration& arch);

}  // namespace moesim::cost
