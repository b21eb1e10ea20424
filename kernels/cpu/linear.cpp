// fp32 linear on the CPU. See linear.h. Threads split the output features so every thread
// streams a disjoint slice of W once for all rows (the weights dominate memory traffic); within
// a thread, four rows of x share each load of W. Each output element is one SIMD reduction over
// k in the same order whatever the batch, so results do not depend on how rows are chunked.
#include "kernels/cpu/linear.h"

#include "kernels/cpu/threads.h"

namespace di::kernels::cpu {
namespace {

// y[r][n] for rows [0, rows) of x against W rows [n0, n1). AVX2 where the CPU has it.
__attribute__((target_clones("avx2", "default"))) void linear_block(
    const float* x, int64_t rows, int64_t in, const float* w, int64_t n0, int64_t n1, float* y,
    int64_t x_stride, int64_t y_stride) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* x0 = x + r * x_stride;
    const float* x1 = x0 + x_stride;
    const float* x2 = x1 + x_stride;
    const float* x3 = x2 + x_stride;
    for (int64_t n = n0; n < n1; ++n) {
      const float* wn = w + n * in;
      float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
      for (int64_t k = 0; k < in; ++k) {
        const float wk = wn[k];
        a0 += x0[k] * wk;
        a1 += x1[k] * wk;
        a2 += x2[k] * wk;
        a3 += x3[k] * wk;
      }
      float* yn = y + r * y_stride + n;
      yn[0] = a0;
      yn[y_stride] = a1;
      yn[2 * y_stride] = a2;
      yn[3 * y_stride] = a3;
    }
  }
  for (; r < rows; ++r) {
    const float* xr = x + r * x_stride;
    for (int64_t n = n0; n < n1; ++n) {
      const float* wn = w + n * in;
      float a = 0.f;
#pragma omp simd reduction(+ : a)
      for (int64_t k = 0; k < in; ++k) a += xr[k] * wn[k];
      y[r * y_stride + n] = a;
    }
  }
}

}  // namespace

void linear_serial(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
                   int64_t x_stride, int64_t y_stride) {
  linear_block(x, rows, in, w, 0, out, y, x_stride, y_stride);
}

__attribute__((target_clones("avx2", "default"))) float dot(const float* a, const float* b,
                                                             int64_t n) {
  float acc = 0.f;
#pragma omp simd reduction(+ : acc)
  for (int64_t k = 0; k < n; ++k) acc += a[k] * b[k];
  return acc;
}

void linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
            int64_t x_stride, int64_t y_stride) {
  // Blocks of 64 output features keep a thread's W slice cache-sized against 4-row groups.
  constexpr int64_t kCols = 64;
  auto body = [&](int64_t b0, int64_t b1) {
    for (int64_t n0 = b0 * kCols; n0 < b1 * kCols && n0 < out; n0 += kCols) {
      const int64_t n1 = n0 + kCols < out ? n0 + kCols : out;
      linear_block(x, rows, in, w, n0, n1, y, x_stride, y_stride);
    }
  };
  const int64_t blocks = (out + kCols - 1) / kCols;
  if (rows * in * out < (1 << 17)) {  // below this a thread hand-off costs more than it saves
    body(0, blocks);
    return;
  }
  parallel_for(blocks, body);
}

}  // namespace di::kernels::cpu
