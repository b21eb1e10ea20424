// Skinny products for decode: y[M, N] = x[M, K] @ W[N, K]^T with bf16 weights and at most
// kGemvMaxRows rows of x. A decode step is a few rows against large weights, so the time is the
// weight read; cuBLAS's kernels for so few rows leave much of the bandwidth unused (a 128 x 8 tile
// with few blocks in flight), this streams each weight row once with many 16-byte loads in
// flight per thread. Each (m, n) sum is taken in one fixed order that depends on K and N only,
// so a row's result is the same whatever M is (up to kGemvMaxRows). Host launcher on device
// pointers.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// Up to 4 rows: at 8, cuBLAS's tiles were faster on an H200 (V4-Flash-width decode at batch 8:
// 3.69 ms a step through this against 3.04 through cuBLAS), the inputs' loads and conversions
// then weighing more than the weight stream.
inline constexpr int64_t kGemvMaxRows = 4;

// Whether gemv_bf16 takes this product: 1 <= M <= kGemvMaxRows, K and ldx multiples of 8 (so
// every 8-element piece is one 16-byte load), x and w 16-byte aligned.
bool gemv_fits(int64_t M, int64_t K, int64_t ldx, const void* x, const void* w);

// y[m, n] = sum_k bf16(x[m, k]) * W[n, k] (+ beta * y[m, n]), fp32 sums. x is fp32 (rounded to
// bf16 on load, as the staged GEMM path rounds it) or bf16, rows ldx elements apart; W bf16
// [N, K] row-major; y fp32, rows ldy apart. Anything gemv_fits refuses is an error.
Status gemv_bf16(const void* x, DType x_type, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
                 int64_t ldy, float beta, void* stream);

// Several products of one x in one launch (a decode layer's projections of its normed input):
// target i is y_i[M, N_i] (rows ldy_i apart) = x @ W_i^T, each as gemv_bf16 computes it alone,
// to the bit (a sum's order depends on K only). Saves a launch and a ramp per product, which
// at one row cost more than the few megabytes each streams.
inline constexpr int kGemvMaxTargets = 8;
struct GemvTarget {
  const void* w = nullptr;  // bf16 [N, K]
  int64_t N = 0;
  float* y = nullptr;
  int64_t ldy = 0;
};
Status gemv_bf16_many(const void* x, DType x_type, int64_t M, int64_t K, int64_t ldx, const GemvTarget* targets,
                      int count, void* stream);

// Grouped: x [M, groups * K] fp32 (rounded to bf16 on load), W [N, K] in `groups` consecutive
// blocks of N / groups rows; output n reads x's slice n / (N / groups). V4's grouped output
// projection (eight groups of heads, each down to o_lora_rank) at decode, one launch without the
// bf16 staging copy. Each (m, n) sum has gemv_bf16's order for K.
bool gemv_grouped_fits(int64_t M, int64_t groups, int64_t K, int64_t N, const void* x, const void* w);
Status gemv_bf16_grouped(const float* x, int64_t M, int64_t groups, int64_t K, const void* w, int64_t N, float* y,
                         int64_t ldy, void* stream);

}  // namespace di::kernels::cuda
