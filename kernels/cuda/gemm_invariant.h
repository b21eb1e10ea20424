// InvariantGemm: Gemm's batch-invariant mode. A row's product must not depend on how many rows
// (M) the call has, which cuBLAS's default selection breaks: it picks tiles and split-K by M.
// Here every weight shape (N, K, strides, batch, dtypes, pointer alignment; never M) is planned
// once: the cuBLASLt heuristic's algorithm for a fixed M, forced to split-K 1 with no reduction
// scheme, kept only if cuBLASLt accepts it for one row and for many. Its kernel then reduces each
// output over K in one order whatever M is. A shape no such algorithm takes runs an own tiled
// kernel that sums K in ascending order. Internal to kernels/cuda/gemm.cu.
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// One (possibly strided-batched) product y_b = x_b W_b^T (+ beta y_b); see Gemm::linear_batched.
struct GemmCall {
  const void* x = nullptr;
  int64_t M = 0, K = 0, lda = 0, stride_x = 0;
  const void* w = nullptr;
  int64_t N = 0, stride_w = 0;
  DType in_type = DType::kBF16;
  void* y = nullptr;
  int64_t ldc = 0, stride_y = 0;
  DType out_type = DType::kF32;
  int64_t batch = 1;
  float beta = 0.f;
};

class InvariantGemm {
 public:
  // `workspace` (device, `workspace_bytes`) is shared with the owning Gemm's cuBLAS handle: both
  // run on `stream`, one call at a time.
  static Result<InvariantGemm*> create(void* stream, void* workspace, int64_t workspace_bytes);
  ~InvariantGemm();
  InvariantGemm(const InvariantGemm&) = delete;
  InvariantGemm& operator=(const InvariantGemm&) = delete;

  Status run(const GemmCall& c);

  // Shapes planned so far and how many of them run the own kernel (for logs and tests).
  int64_t planned() const { return static_cast<int64_t>(plans_.size()); }
  int64_t own_kernel_plans() const;

 private:
  InvariantGemm() = default;
  struct Plan {
    bool lt = false;  // false: the own kernel
    std::array<uint64_t, 8> algo{};  // a cublasLtMatmulAlgo_t
  };
  using Key = std::array<int64_t, 12>;
  Result<Plan> make_plan(const GemmCall& c, int64_t align);
  Status run_lt(const Plan& p, const GemmCall& c, int64_t align);

  void* lt_ = nullptr;  // cublasLtHandle_t
  void* stream_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::map<Key, Plan> plans_;
};

// The own kernel: y_b[m, n] = sum over k ascending of x_b[m, k] * W_b[n, k] in fp32 (+ beta y).
Status invariant_gemm_fallback(const GemmCall& c, void* stream);

}  // namespace di::kernels::cuda
