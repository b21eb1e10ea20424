// Gemm over cuBLAS (cublasGemmEx). Row-major y = x W^T is the column-major product
// y^T[N, M] = W[K, N]^T x^T[K, M], so W is passed transposed and x as is.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "kernels/cuda/cublas_util.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/gemm_invariant.h"
#include "kernels/cuda/gemv.h"

namespace di::kernels::cuda {
namespace {

cudaDataType_t cuda_type(DType t) { return t == DType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

}  // namespace

Result<Gemm> Gemm::create(void* stream) {
  Gemm g;
  cublasHandle_t h = nullptr;
  DI_RETURN_IF_ERROR(cublas_status(cublasCreate(&h), "cublasCreate"));
  g.handle_ = h;
  g.stream_ = stream;
  DI_RETURN_IF_ERROR(cublas_status(cublasSetStream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream"));
  // A fixed workspace: cuBLAS must not allocate while a graph is being captured.
  constexpr int64_t kWorkspace = int64_t{32} << 20;
  DI_RETURN_IF_ERROR(g.workspace_.allocate(kWorkspace));
  DI_RETURN_IF_ERROR(cublas_status(cublasSetWorkspace(h, g.workspace_.get(), kWorkspace), "cublasSetWorkspace"));
  return Result<Gemm>(std::move(g));
}

Gemm::Gemm() = default;
Gemm::~Gemm() {
  invariant_.reset();
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}
Gemm::Gemm(Gemm&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)),
      workspace_(std::move(o.workspace_)),
      group_ptrs_(std::move(o.group_ptrs_)),
      grouped_unsupported_(o.grouped_unsupported_),
      stream_(o.stream_),
      invariant_(std::move(o.invariant_)) {}
Gemm& Gemm::operator=(Gemm&& o) noexcept {
  if (this != &o) {
    invariant_.reset();
    if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
    handle_ = std::exchange(o.handle_, nullptr);
    workspace_ = std::move(o.workspace_);
    group_ptrs_ = std::move(o.group_ptrs_);
    grouped_unsupported_ = o.grouped_unsupported_;
    stream_ = o.stream_;
    invariant_ = std::move(o.invariant_);
  }
  return *this;
}

Status Gemm::set_batch_invariant(bool on) {
  if (!handle_) return Status::state("Gemm: no cuBLAS handle");
  if (!on) {
    invariant_.reset();
    return Status::ok();
  }
  if (invariant_) return Status::ok();
  DI_ASSIGN_OR_RETURN(InvariantGemm * g, InvariantGemm::create(stream_, workspace_.get(), workspace_.bytes()));
  invariant_.reset(g);
  return Status::ok();
}

Status Gemm::linear(const void* x, int64_t M, int64_t K, int64_t lda, const void* w, int64_t N, DType in_type,
                    void* y, int64_t ldc, DType out_type, float beta) const {
  if (!handle_) return Status::state("Gemm: no cuBLAS handle");
  if (M < 0 || N <= 0 || K <= 0 || lda < K || ldc < N)
    return Status::invalid_argument("Gemm::linear: bad shape M=" + std::to_string(M) + " N=" + std::to_string(N) +
                                    " K=" + std::to_string(K));
  if (M == 0) return Status::ok();
  if (invariant_) return invariant_->run({x, M, K, lda, 0, w, N, 0, in_type, y, ldc, 0, out_type, 1, beta});
  // Decode's few rows: the weight read is the time, which gemv.h streams faster than cuBLAS.
  if (in_type == DType::kBF16 && out_type == DType::kF32 && gemv_fits(M, K, lda, x, w))
    return gemv_bf16(x, DType::kBF16, M, K, lda, w, N, static_cast<float*>(y), ldc, beta, stream_);
  const float alpha = 1.f;
  // bf16 operands go through the tensor cores; fp32 ones stay on exact fp32 FMA.
  const cublasComputeType_t compute =
      in_type == DType::kF32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  return cublas_status(
      cublasGemmEx(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N),
                   static_cast<int>(M), static_cast<int>(K), &alpha, w, cuda_type(in_type), static_cast<int>(K), x,
                   cuda_type(in_type), static_cast<int>(lda), &beta, y, cuda_type(out_type), static_cast<int>(ldc),
                   compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

Status Gemm::linear_batched(const void* x, int64_t M, int64_t K, int64_t lda, int64_t stride_x, const void* w,
                            int64_t N, int64_t stride_w, DType in_type, void* y, int64_t ldc, int64_t stride_y,
                            DType out_type, int64_t batch) const {
  if (!handle_) return Status::state("Gemm: no cuBLAS handle");
  if (M < 0 || N <= 0 || K <= 0 || lda < K || ldc < N || batch <= 0)
    return Status::invalid_argument("Gemm::linear_batched: bad shape M=" + std::to_string(M) +
                                    " N=" + std::to_string(N) + " K=" + std::to_string(K));
  if (M == 0) return Status::ok();
  if (invariant_)
    return invariant_->run(
        {x, M, K, lda, stride_x, w, N, stride_w, in_type, y, ldc, stride_y, out_type, batch, 0.f});
  const float alpha = 1.f, beta = 0.f;
  const cublasComputeType_t compute = in_type == DType::kF32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  return cublas_status(
      cublasGemmStridedBatchedEx(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N),
                                 static_cast<int>(M), static_cast<int>(K), &alpha, w, cuda_type(in_type),
                                 static_cast<int>(K), stride_w, x, cuda_type(in_type), static_cast<int>(lda), stride_x,
                                 &beta, y, cuda_type(out_type), static_cast<int>(ldc), stride_y,
                                 static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

Status Gemm::linear_grouped(const std::vector<Group>& groups, int64_t K, int64_t lda, int64_t N, DType in_type,
                            int64_t ldc, DType out_type) {
  if (!handle_) return Status::state("Gemm: no cuBLAS handle");
  if (N <= 0 || K <= 0 || lda < K || ldc < N)
    return Status::invalid_argument("Gemm::linear_grouped: bad shape N=" + std::to_string(N) +
                                    " K=" + std::to_string(K));
  std::vector<const Group*> live;
  for (const Group& g : groups) {
    if (g.M < 0) return Status::invalid_argument("Gemm::linear_grouped: a group of negative rows");
    if (g.M > 0) live.push_back(&g);
  }
  if (live.empty()) return Status::ok();
  auto each = [&]() -> Status {
    for (const Group* g : live) DI_RETURN_IF_ERROR(linear(g->x, g->M, K, lda, g->w, N, in_type, g->y, ldc, out_type));
    return Status::ok();
  };
  if (invariant_ || in_type == DType::kF32 || grouped_unsupported_ || live.size() == 1) return each();
  const int G = static_cast<int>(live.size());
  // Device arrays: W pointers, then x, then y (cuBLAS's A, B and C of the column-major product).
  std::vector<const void*> ptrs(3 * size_t(G));
  std::vector<int> m(G, static_cast<int>(N)), n(G), k(G, static_cast<int>(K)), lda_w(G, static_cast<int>(K)),
      ldb(G, static_cast<int>(lda)), ldc_y(G, static_cast<int>(ldc)), size(G, 1);
  std::vector<float> alpha(G, 1.f), beta(G, 0.f);
  std::vector<cublasOperation_t> ta(G, CUBLAS_OP_T), tb(G, CUBLAS_OP_N);
  for (int g = 0; g < G; ++g) {
    ptrs[g] = live[g]->w;
    ptrs[G + g] = live[g]->x;
    ptrs[2 * G + g] = live[g]->y;
    n[g] = static_cast<int>(live[g]->M);
  }
  const int64_t bytes = int64_t(ptrs.size()) * int64_t(sizeof(void*));
  if (group_ptrs_.bytes() < bytes) DI_RETURN_IF_ERROR(group_ptrs_.allocate(bytes));
  // From pageable memory the copy is staged before the call returns, so `ptrs` may go; it runs
  // in stream order, after the products that read the previous contents.
  DI_RETURN_IF_ERROR(copy_to_device_async(group_ptrs_.get(), ptrs.data(), bytes, stream_));
  auto* dev = static_cast<const void* const*>(group_ptrs_.get());
  const cublasStatus_t st = cublasGemmGroupedBatchedEx(
      static_cast<cublasHandle_t>(handle_), ta.data(), tb.data(), m.data(), n.data(), k.data(), alpha.data(), dev,
      cuda_type(in_type), lda_w.data(), dev + G, cuda_type(in_type), ldb.data(), beta.data(),
      const_cast<void* const*>(dev + 2 * G), cuda_type(out_type), ldc_y.data(), G, size.data(), CUBLAS_COMPUTE_32F);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
    grouped_unsupported_ = true;
    return each();
  }
  return cublas_status(st, "cublasGemmGroupedBatchedEx");
}

}  // namespace di::kernels::cuda
