// RMSNorm on the CPU. See rms_norm.h.
#include "kernels/cpu/rms_norm.h"

#include <cmath>

namespace di::kernels::cpu {

void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, int64_t stride,
              float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    float* yr = y + r * stride;
    float ss = 0.f;
#pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < dim; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    if (weight) {
      for (int64_t i = 0; i < dim; ++i) yr[i] = weight[i] * (xr[i] * inv);
    } else {
      for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv;
    }
  }
}

}  // namespace di::kernels::cpu
