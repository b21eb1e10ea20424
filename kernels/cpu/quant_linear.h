// Linear layers over weights as DeepSeek stores them (fp8 e4m3 with 128 x 128 block scales, fp4
// e2m1 with per-32 scales; kernels/weight_format.h): y = x W^T with W dequantized tile by tile
// into fp32 and fp32 accumulation, so the result equals linear() on the dequantized matrix.
// Never materialises the whole fp32 matrix.
#pragma once

#include <cstdint>

#include "kernels/weight_format.h"

namespace di::kernels::cpu {

// Output features [row0, row0 + out) of `w` (the grouped projections use a row range): y[m, n]
// = sum_k x[m, k] * W[row0 + n, k] for m < rows. x rows `x_stride` apart, y rows `y_stride`.
void linear(const float* x, int64_t rows, const LinearWeight& w, int64_t row0, int64_t out, float* y,
            int64_t x_stride, int64_t y_stride);

inline void linear(const float* x, int64_t rows, const LinearWeight& w, float* y) {
  linear(x, rows, w, 0, w.out, y, w.in, w.out);
}

// Rows [row0, row0 + count) of W as fp32 into `dst` ([count, in]); element = code * its scale,
// rounded once to fp32 (exact for ue8m0 scales, fp32's product for fp32 scales).
void dequantize_rows(const LinearWeight& w, int64_t row0, int64_t count, float* dst);

}  // namespace di::kernels::cpu
