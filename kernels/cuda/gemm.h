// Gemm: the cuBLAS handle of one stream and the one product every model layer is made of,
// y[M, N] = x[M, K] @ W[N, K]^T (a Linear with weights stored [out, in] as in checkpoints).
// fp32 accumulation always; fp32 operands never use TF32 so fp32 fixtures match the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

class InvariantGemm;

class Gemm {
 public:
  // Creates a cuBLAS handle bound to `stream` (a cudaStream_t; nullptr = default stream).
  static Result<Gemm> create(void* stream);
  Gemm();
  ~Gemm();
  Gemm(Gemm&& o) noexcept;  // moves the handle and its workspace
  Gemm& operator=(Gemm&& o) noexcept;
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // y = x @ W^T (+ beta * y). x: [M, K] of `in_type` with row stride lda (elements), W: [N, K]
  // of `in_type`, y: [M, N] of `out_type` with row stride ldc. All device pointers.
  Status linear(const void* x, int64_t M, int64_t K, int64_t lda, const void* w, int64_t N, DType in_type,
                void* y, int64_t ldc, DType out_type, float beta = 0.f) const;
  // `batch` independent products y_b = x_b W_b^T, x_b = x + b * stride_x (rows lda apart),
  // W_b = w + b * stride_w, y_b = y + b * stride_y (rows ldc apart), strides in elements: a
  // grouped projection (each group of heads through its own matrix) as one launch.
  Status linear_batched(const void* x, int64_t M, int64_t K, int64_t lda, int64_t stride_x, const void* w, int64_t N,
                        int64_t stride_w, DType in_type, void* y, int64_t ldc, int64_t stride_y, DType out_type,
                        int64_t batch) const;

  // One product per group, y_g = x_g W_g^T with x_g [M_g, K] (rows lda apart), W_g [N, K] and
  // y_g [M_g, N] (rows ldc apart): MoE experts with their own row counts, as one cuBLAS grouped
  // GEMM (sizes on the host, pointers uploaded on the stream). Groups of no rows are skipped.
  // fp32 operands, batch-invariant mode, or a cuBLAS without a grouped kernel for the types (13.0
  // has none for bf16 into fp32) take one linear() per group.
  struct Group {
    const void* x = nullptr;
    int64_t M = 0;
    const void* w = nullptr;
    void* y = nullptr;
  };
  Status linear_grouped(const std::vector<Group>& groups, int64_t K, int64_t lda, int64_t N, DType in_type, int64_t ldc,
                        DType out_type);
  // Whether cuBLAS refused a grouped GEMM (linear_grouped loops over linear() since).
  bool grouped_refused() const { return grouped_unsupported_; }

  // Batch-invariant mode (on: set before the first product, never while a graph is captured):
  // every call with the same weight shape runs one fixed kernel with no split of K, so a row's
  // result has the same bits whatever M is (gemm_invariant.h). Off: cuBLAS's default choice.
  Status set_batch_invariant(bool on);
  bool batch_invariant() const { return invariant_ != nullptr; }

  // Products of at most kGemvMaxRows bf16 rows go to gemv_bf16, unless every product must take
  // the batch-invariant kernel.
  bool skinny_rows() const { return !invariant_; }

 private:
  void* handle_ = nullptr;  // cublasHandle_t
  DeviceBuffer workspace_;  // set up front so calls can be captured in CUDA graphs
  DeviceBuffer group_ptrs_;  // linear_grouped's device arrays of W, x and y pointers
  bool grouped_unsupported_ = false;  // cuBLAS refused a grouped GEMM once: loop from then on
  void* stream_ = nullptr;
  std::unique_ptr<InvariantGemm> invariant_;  // null unless batch-invariant
};

}  // namespace di::kernels::cuda
