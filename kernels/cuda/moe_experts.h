// The pieces of a routed expert computation around its GEMMs: gather the rows routed to one
// expert, DeepSeek-V4's clipped SwiGLU on the fused gate|up projection, and the weighted
// scatter-add of the expert's output back into the token rows. fp32 activations (bf16 copies for
// the bf16 models' GEMM operands).
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// out[i, :] = x[rows[i], :] for i < n; x rows of `dim` floats. _bf16: out rounded to bf16 (the
// GEMM operand of the bf16 models, in one pass).
Status gather_rows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, void* stream);
Status gather_rows_bf16(const float* x, const int32_t* rows, int64_t n, int64_t dim, void* out, void* stream);

// out[r, c] = silu(min(g, limit)) * clamp(u, -limit, limit) with g = gate_up[r, c] and
// u = gate_up[r, inter + c] (gate and up side by side in rows of 2 * inter).
Status clamped_swiglu(const float* gate_up, int64_t rows, int64_t inter, float limit, float* out, void* stream);
Status clamped_swiglu_bf16(const float* gate_up, int64_t rows, int64_t inter, float limit, void* out, void* stream);

// y[rows[i], :] += x[i, :] * weights[i] for i < n (atomic: a row may appear twice).
Status scatter_add_rows(const float* x, const int32_t* rows, const float* weights, int64_t n, int64_t dim, float* y,
                        void* stream);

}  // namespace di::kernels::cuda
