// The residual add fused with the next RMSNorm that also writes the bf16 GEMM operand: what a
// bf16 DeepSeek-V2/V3 layer does between its blocks, in one pass instead of two. fp32 residual,
// delta, weight and y (the same arithmetic as elementwise.h's add_rms_norm in fp32); y16 is y
// rounded to nearest-even bf16.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// residual += delta (both [rows, dim]); y = rms_norm(residual) * weight; y16 = bf16(y).
Status add_rms_norm_with_bf16(float* residual, const float* delta, const float* weight, float* y, void* y16,
                              int64_t rows, int64_t dim, float eps, void* stream);

}  // namespace di::kernels::cuda
