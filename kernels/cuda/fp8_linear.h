// fp8 linear layers on the device: weights in e4m3 with fp32 block scales, as DeepSeek ships them
// (128 x 128 blocks, ue8m0 scales made fp32 exactly at load) or as FP4 experts become at load
// (1 x 128 blocks). Two products, chosen by the number of rows:
//   - few rows (decode): fp8_linear_w8a16 streams each weight row once with 16-byte loads and
//     dequantizes in registers against bf16 activations (on the tensor cores from two rows), fp32
//     accumulation: memory-bound, and the dequantized weights are used exactly (w = q * s);
//   - many rows (prefill): the activations are quantized per 1 x 128 to e4m3 on the fly
//     (quantize_rows_fp8, DeepSeek's activation scheme) and multiplied on the fp8 tensor cores by
//     cuBLASLt's block-scaled GEMM (Fp8Gemm in fp8_gemm.h).
// Host-only header.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// Columns per scale along a row: DeepSeek's block width, and cuBLASLt's VEC128 / BLK128x128.
constexpr int64_t kFp8BlockCols = 128;

// An e4m3 matrix [rows, cols] (row-major) and its fp32 scales: element (r, c) is
// e4m3(data[r * cols + c]) * scale[(r / block_rows) * scale_row_stride + (c / 128) * scale_col_stride].
// DeepSeek's 128 x 128 grid is block_rows 128, row stride ceil(cols / 128), col stride 1; a
// 1 x 128 grid stored as cuBLASLt's VEC128 wants it is block_rows 1, row stride 1, col stride rows.
struct Fp8Matrix {
  const uint8_t* data = nullptr;
  const float* scale = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int32_t block_rows = 128;
  int64_t scale_row_stride = 0;
  int64_t scale_col_stride = 1;
};

// The most rows fp8_linear_w8a16 takes in one launch (larger M loops inside).
constexpr int64_t kW8A16MaxRows = 16;

// y[b][M, N] (fp32, rows ldy apart) = x[b][M, K] (bf16 or fp32, rows ldx apart) @ W[b]^T for
// `batch` products: x_b = x + b * x_stride, W_b = rows b * w.rows / batch.. of `w` (a grouped
// projection: each group of heads through its own slice of one matrix), y_b = y + b * y_stride.
// Strides in elements. K = w.cols; scale rows follow W's own row index (groups may split a block).
// From two rows, bf16 activations with K % 64 == 0, 16 | rows per group and 16-byte aligned rows
// run on the tensor cores (the codes made bf16 in registers, fp32 sums); the rest, or `cuda_cores` (tests and
// benches compare the two), on a CUDA-core kernel. Both take M up to kW8A16MaxRows per pass.
Status fp8_linear_w8a16(const void* x, DType x_type, int64_t M, int64_t ldx, int64_t x_stride, const Fp8Matrix& w,
                        int64_t batch, float* y, int64_t ldy, int64_t y_stride, void* stream,
                        bool cuda_cores = false);

// Quantizes x[M, K] (bf16, rows ldx apart) per row and 128 columns: q[M, K] e4m3 (rows K apart)
// and scales[(k / 128) * scale_ld + m] (cuBLASLt's VEC128 layout, M-contiguous; scale_ld >= M),
// scale = amax / 448 or,
// with `pow2_scales`, the power of two at or above it (DeepSeek-V4's ue8m0 activations). An
// all-zero block gets scale 1. K a multiple of 16.
Status quantize_rows_fp8(const void* x, int64_t M, int64_t K, int64_t ldx, bool pow2_scales, uint8_t* q, float* scales,
                         int64_t scale_ld, void* stream);

// DeepSeek-V4's FP4 experts as fp8 on the device: `packed` [rows, cols / 2] e2m1 (element 0 in
// the low nibble) with ue8m0 scales [rows, cols / 32] become e4m3 [rows, cols] and fp32 scales in
// the 1 x 128 VEC128 layout (scale[(c / 128) * rows + r]), by the same exact rule as
// kernels/cpu/fp4_to_fp8.h. *inexact (device; set it to -1 first) becomes the smallest flat
// index (row * ceil(cols / 128) + block) of a block e4m3 cannot carry exactly; read it after.
Status reencode_fp4_to_fp8(const uint8_t* packed, const uint8_t* ue8m0, int64_t rows, int64_t cols, uint8_t* e4m3,
                           float* scales, int64_t* inexact, void* stream);

// The bf16 matrix [rows, cols] (row-major) nearest to dequant(w): the large-batch path for weights
// cuBLASLt's fp8 GEMM does not take (1 x 128 scales, narrow matrices), multiplied in bf16 after.
Status dequantize_fp8_to_bf16(const Fp8Matrix& w, void* out, void* stream);

// `n` random e4m3 codes from `seed` (benchmark weights): uniform sign, exponent field 0..8 and
// mantissa, so values stay within +-3.75 and no code is NaN.
Status fill_random_fp8(uint8_t* codes, int64_t n, uint64_t seed, void* stream);

// ue8m0 scales (one byte each, 2^(b - 127), 0xff NaN) to fp32, exactly.
Status ue8m0_to_f32(const uint8_t* in, int64_t n, float* out, void* stream);

}  // namespace di::kernels::cuda
