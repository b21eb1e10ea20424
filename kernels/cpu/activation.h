// Elementwise steps the CPU models share around their linears: SwiGLU's silu(gate) * up and a
// bias added to each row. fp32, in place where noted; no allocation.
#pragma once

#include <cstdint>

namespace di::kernels::cpu {

// out[i] = silu(gate[i]) * up[i] for i < n (out may alias gate or up).
void silu_and_mul(const float* gate, const float* up, int64_t n, float* out);

// y[r, j] += bias[j] for r < rows, j < width; rows are `stride` floats apart.
void add_bias(float* y, int64_t rows, int64_t width, int64_t stride, const float* bias);

}  // namespace di::kernels::cpu
