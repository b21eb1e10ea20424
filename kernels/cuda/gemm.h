// Gemm: the cuBLAS handle of one stream and the one product every model layer is made of,
// y[M, N] = x[M, K] @ W[N, K]^T (a Linear with weights stored [out, in] as in checkpoints).
// fp32 accumulation always; fp32 operands never use TF32 so fp32 fixtures match the CPU.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

class Gemm {
 public:
  // Creates a cuBLAS handle bound to `stream` (a cudaStream_t; nullptr = default stream).
  static Result<Gemm> create(void* stream);
  Gemm() = default;
  ~Gemm();
  Gemm(Gemm&& o) noexcept;  // moves the handle and its workspace
  Gemm& operator=(Gemm&& o) noexcept;
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // y = x @ W^T (+ beta * y). x: [M, K] of `in_type` with row stride lda (elements), W: [N, K]
  // of `in_type`, y: [M, N] of `out_type` with row stride ldc. All device pointers.
  Status linear(const void* x, int64_t M, int64_t K, int64_t lda, const void* w, int64_t N, DType in_type,
                void* y, int64_t ldc, DType out_type, float beta = 0.f) const;

 private:
  void* handle_ = nullptr;  // cublasHandle_t
  DeviceBuffer workspace_;  // set up front so calls can be captured in CUDA graphs
};

}  // namespace di::kernels::cuda
