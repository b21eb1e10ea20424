// Fp8Gemm: cuBLASLt's block-scaled fp8 GEMM on sm_90 (fp8 tensor cores, fp32 accumulation with
// the scales applied per 128-wide K block): y[M, N] = dequant(xq)[M, K] @ dequant(W)^T, activations
// quantized per 1 x 128 (quantize_rows_fp8, VEC128_32F), weights in DeepSeek's 128 x 128 grid
// (BLK128x128_32F; sm_90 has no algorithm for 1 x 128 weights, see supports()). One handle per stream;
// algorithms are chosen once per shape and kept, so calls can be captured in CUDA graphs.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "base/status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/fp8_linear.h"

namespace di::kernels::cuda {

class Fp8Gemm {
 public:
  // A cuBLASLt handle for `stream` (a cudaStream_t; nullptr = default stream).
  static Result<Fp8Gemm> create(void* stream);
  Fp8Gemm() = default;
  ~Fp8Gemm();
  Fp8Gemm(Fp8Gemm&& o) noexcept;
  Fp8Gemm& operator=(Fp8Gemm&& o) noexcept;
  Fp8Gemm(const Fp8Gemm&) = delete;
  Fp8Gemm& operator=(const Fp8Gemm&) = delete;

  // Whether `w` has a layout this GEMM takes: the 128 x 128 grid, cols a multiple of 128 with
  // a multiple of four scales per row (cuBLASLt's 16-byte rule), rows a multiple of 16.
  static bool supports(const Fp8Matrix& w);

  // y (fp32, rows ldy apart) = xq @ W^T: xq e4m3 [M, K = w.cols] (rows ldx apart) with
  // x_scales[(k / 128) * M + m], as quantize_rows_fp8 writes them (a column slice of a wider
  // quantized row starts at scale block slice_start / 128). M a multiple of 4 (cuBLASLt has no
  // algorithm otherwise: each block's scales must start 16-byte aligned). Device pointers,
  // 16-byte aligned.
  Status linear(const uint8_t* xq, int64_t ldx, const float* x_scales, int64_t M, const Fp8Matrix& w, float* y,
                int64_t ldy) const;

 private:
  struct Algo {
    uint8_t bytes[64];  // cublasLtMatmulAlgo_t, kept opaque here
  };
  Result<const Algo*> algo(int64_t M, const Fp8Matrix& w, int64_t ldx, int64_t ldy, void* desc, void* a, void* b,
                           void* c) const;

  void* handle_ = nullptr;  // cublasLtHandle_t
  void* stream_ = nullptr;
  DeviceBuffer workspace_;
  mutable std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int32_t>, Algo> algos_;
};

}  // namespace di::kernels::cuda
