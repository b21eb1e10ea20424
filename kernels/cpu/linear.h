// Dense fp32 matrix products for the CPU path: y = x W^T with W row-major [out, in] as
// checkpoints store it. Multi-threaded over output features; no allocation.
#pragma once

#include <cstdint>

namespace di::kernels::cpu {

// y[m, n] = sum_k x[m, k] * w[n, k] for m < rows, n < out, k < in. x rows are `x_stride` floats
// apart and y rows `y_stride` apart (pass in / out for dense).
void linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
            int64_t x_stride, int64_t y_stride);

inline void linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y) {
  linear(x, rows, in, w, out, y, in, out);
}

// linear() on the calling thread only, for kernels that already split the work across threads
// (quant_linear feeds it dequantized weight tiles); same per-element summation order.
void linear_serial(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
                   int64_t x_stride, int64_t y_stride);

// Dot product of two fp32 vectors (vectorised reduction).
float dot(const float* a, const float* b, int64_t n);

}  // namespace di::kernels::cpu
