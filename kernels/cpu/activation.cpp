// silu_and_mul and add_bias. See activation.h.
#include "kernels/cpu/activation.h"

#include <cmath>

namespace di::kernels::cpu {

void silu_and_mul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void add_bias(float* y, int64_t rows, int64_t width, int64_t stride, const float* bias) {
  if (!bias) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * stride;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) yr[j] += bias[j];
  }
}

}  // namespace di::kernels::cpu
