// RMSNorm on the GPU: y = x / sqrt(mean(x^2) + eps) * weight, bf16 in and out, fp32 sums.
// Host-callable launchers only; the kernels live in rms_norm.cu.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// x, weight and y are device pointers to bf16 (uint16_t bit patterns): x and y are
// [rows, dim] row-major, weight is [dim]. `stream` is a cudaStream_t (nullptr = default).
// y may alias x. Returns a device error if the launch fails.
Status rms_norm_bf16(const uint16_t* x, const uint16_t* weight, uint16_t* y, int64_t rows,
                     int64_t dim, float eps, void* stream);

}  // namespace di::kernels::cuda
