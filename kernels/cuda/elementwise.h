// The small per-token kernels of a decoder layer: embedding gather, RMSNorm (plain and fused
// with the residual add), bias, SwiGLU, rotary embedding, dtype conversion and random fill.
// Host-callable launchers on device pointers; `stream` is a cudaStream_t (nullptr = default).
// Storage is `dtype` (fp32 or bf16); every kernel computes in fp32.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// out[i, :] = table[ids[i], :] for i < rows; ids on the device, each in [0, vocab).
Status embedding(const int32_t* ids, int64_t rows, const void* table, int64_t dim, void* out, DType dtype,
                 void* stream);

// y = x / sqrt(mean(x^2) + eps) * weight over vectors of `dim` elements: `rows` rows of
// `heads` vectors each, vector h of row r at r * stride + h * dim (heads = 1 for a plain norm;
// > 1 for per-head q/k norms). y may alias x. A null weight scales by 1.
Status rms_norm(const void* x, const void* weight, void* y, int64_t rows, int64_t heads, int64_t dim,
                int64_t stride, float eps, DType dtype, void* stream);

// rms_norm of fp32 rows of `dim` (heads 1, dense), writing y (fp32, may alias x) and the same
// values rounded to bf16 into y16: the norm and the GEMM operand in one pass.
Status rms_norm_with_bf16(const float* x, const float* weight, float* y, void* y16, int64_t rows, int64_t dim,
                          float eps, void* stream);

// residual += delta (both [rows, dim]); then y = rms_norm(residual). The sum is rounded to
// `dtype` before the norm, as a framework that stores the residual stream in `dtype` does.
Status add_rms_norm(void* residual, const void* delta, const void* weight, void* y, int64_t rows, int64_t dim,
                    float eps, DType dtype, void* stream);

// x[r, c] += bias[c] for c < cols, rows of stride `stride`.
Status add_bias(void* x, const void* bias, int64_t rows, int64_t cols, int64_t stride, DType dtype, void* stream);

// out[r, c] = silu(gate_up[r, c]) * gate_up[r, inter + c]: gate and up side by side in one row
// of 2*inter (the fused gate_up projection).
Status silu_and_mul(const void* gate_up, int64_t rows, int64_t inter, void* out, DType dtype, void* stream);

// Rotates the first `rot_dim` channels of each head in place, rotate_half pairing (i, i + rot/2),
// cos/sin of positions[row] * inv_freq[i] times `scaling`. x rows are [heads * head_dim] with
// row stride `stride`; positions and inv_freq (rot_dim / 2) on the device.
Status rope_half(void* x, int64_t rows, int64_t heads, int64_t head_dim, int64_t stride, const int64_t* positions,
                 const float* inv_freq, int64_t rot_dim, float scaling, DType dtype, void* stream);

// out = in, element count n: fp32 -> `dtype` (round to nearest even for bf16).
Status convert_from_f32(const float* in, int64_t n, void* out, DType dtype, void* stream);
// out [rows, cols] dense = in [rows, cols] with rows `ld` floats apart, converted to `dtype`.
Status convert_rows_from_f32(const float* in, int64_t rows, int64_t cols, int64_t ld, void* out, DType dtype,
                             void* stream);
// offset + uniform values in [-scale, scale) from a counter hash of (seed, index): reproducible
// weights for benchmarks without a checkpoint.
Status fill_uniform(void* out, int64_t n, float offset, float scale, uint64_t seed, DType dtype, void* stream);

}  // namespace di::kernels::cuda
