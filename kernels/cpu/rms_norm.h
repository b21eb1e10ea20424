// RMSNorm on the CPU in fp32: y = x / sqrt(mean(x^2) + eps) (* weight when given), row by row.
#pragma once

#include <cstdint>

namespace di::kernels::cpu {

// `rows` rows of `dim` floats, `stride` apart; in place when y == x. weight may be null.
void rms_norm(const float* x, const float* weight, int64_t rows, int64_t dim, int64_t stride,
              float eps, float* y);

}  // namespace di::kernels::cpu
