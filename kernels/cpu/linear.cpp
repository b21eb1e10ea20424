// fp32 linear on the CPU. See linear.h. Threads split the output features so every thread
// streams a disjoint slice of W once for all rows (the weights dominate memory traffic).
#include "kernels/cpu/linear.h"

#include "kernels/cpu/threads.h"

namespace di::kernels::cpu {

float dot(const float* a, const float* b, int64_t n) {
  float acc = 0.f;
#pragma omp simd reduction(+ : acc)
  for (int64_t k = 0; k < n; ++k) acc += a[k] * b[k];
  return acc;
}

void linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
            int64_t x_stride, int64_t y_stride) {
  constexpr int64_t kRowBlock = 8;  // rows of x kept hot while one W row streams by
  auto body = [&](int64_t n0, int64_t n1) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const int64_t r1 = r0 + kRowBlock < rows ? r0 + kRowBlock : rows;
      for (int64_t n = n0; n < n1; ++n) {
        const float* wn = w + n * in;
        for (int64_t r = r0; r < r1; ++r) y[r * y_stride + n] = dot(x + r * x_stride, wn, in);
      }
    }
  };
  if (rows * in * out < (1 << 17)) {  // below this a thread hand-off costs more than it saves
    body(0, out);
    return;
  }
  parallel_for(out, body);
}

}  // namespace di::kernels::cpu
