// Fp8Gemm over cuBLASLt. Row-major y = x W^T is the column-major product y^T[N, M] =
// W[K, N]^T x^T[K, M]: W is operand A (transposed, the "TN" layout sm_90 fp8 requires) and the
// quantized activations operand B, so DeepSeek's row-major [N / 128, K / 128] weight scales and
// the M-contiguous activation scales are already the layouts cuBLASLt reads.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstring>
#include <utility>

#include "kernels/cuda/cublas_util.h"
#include "kernels/cuda/fp8_gemm.h"

namespace di::kernels::cuda {
namespace {

static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "Fp8Gemm::Algo holds a cublasLtMatmulAlgo_t");

constexpr int64_t kWorkspace = int64_t{32} << 20;

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

Result<Fp8Gemm> Fp8Gemm::create(void* stream) {
  Fp8Gemm g;
  cublasLtHandle_t h = nullptr;
  DI_RETURN_IF_ERROR(cublas_status(cublasLtCreate(&h), "cublasLtCreate"));
  g.handle_ = h;
  g.stream_ = stream;
  DI_RETURN_IF_ERROR(g.workspace_.allocate(kWorkspace));
  return Result<Fp8Gemm>(std::move(g));
}

Fp8Gemm::~Fp8Gemm() {
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}
Fp8Gemm::Fp8Gemm(Fp8Gemm&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)),
      stream_(o.stream_),
      workspace_(std::move(o.workspace_)),
      algos_(std::move(o.algos_)) {}
Fp8Gemm& Fp8Gemm::operator=(Fp8Gemm&& o) noexcept {
  if (this != &o) {
    if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
    handle_ = std::exchange(o.handle_, nullptr);
    stream_ = o.stream_;
    workspace_ = std::move(o.workspace_);
    algos_ = std::move(o.algos_);
  }
  return *this;
}

bool Fp8Gemm::supports(const Fp8Matrix& w) {
  if (w.cols % kFp8BlockCols != 0 || w.rows % 16 != 0 || !aligned16(w.data) || !aligned16(w.scale)) return false;
  // cuBLASLt 13 on sm_90 finds no algorithm for VEC128 weights against VEC128 activations, so
  // only DeepSeek's 128 x 128 grid comes here.
  return w.block_rows == 128 && w.scale_col_stride == 1 && w.scale_row_stride == w.cols / kFp8BlockCols &&
         w.scale_row_stride % 4 == 0;
}

Result<const Fp8Gemm::Algo*> Fp8Gemm::algo(int64_t M, const Fp8Matrix& w, int64_t ldx, int64_t ldy, void* desc,
                                           void* a, void* b, void* c) const {
  const auto key = std::make_tuple(M, w.rows, w.cols, ldx, ldy, w.block_rows);
  if (auto it = algos_.find(key); it != algos_.end()) return &it->second;
  cublasLtMatmulPreference_t pref = nullptr;
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate"));
  uint64_t ws = static_cast<uint64_t>(kWorkspace);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      static_cast<cublasLtHandle_t>(handle_), static_cast<cublasLtMatmulDesc_t>(desc),
      static_cast<cublasLtMatrixLayout_t>(a), static_cast<cublasLtMatrixLayout_t>(b),
      static_cast<cublasLtMatrixLayout_t>(c), static_cast<cublasLtMatrixLayout_t>(c), pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  DI_RETURN_IF_ERROR(cublas_status(s, "cublasLtMatmulAlgoGetHeuristic (fp8 block-scaled)"));
  if (found < 1)
    return Status::unsupported("cuBLASLt has no block-scaled fp8 algorithm for M=" + std::to_string(M) +
                               " N=" + std::to_string(w.rows) + " K=" + std::to_string(w.cols));
  Algo& slot = algos_[key];
  std::memcpy(slot.bytes, &result.algo, sizeof(result.algo));
  return &slot;
}

Status Fp8Gemm::linear(const uint8_t* xq, int64_t ldx, const float* x_scales, int64_t M, const Fp8Matrix& w, float* y,
                       int64_t ldy) const {
  if (!handle_) return Status::state("Fp8Gemm: no cuBLASLt handle");
  if (M == 0) return Status::ok();
  if (!supports(w) || M < 0 || M % 4 != 0 || ldx < w.cols || ldx % 16 != 0 || ldy < w.rows || ldy % 4 != 0 || !aligned16(xq) ||
      !aligned16(y) || !aligned16(x_scales))
    return Status::invalid_argument("Fp8Gemm::linear: unsupported layout M=" + std::to_string(M) +
                                    " N=" + std::to_string(w.rows) + " K=" + std::to_string(w.cols));
  LtMatmulDescs call;
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatmulDescCreate(&call.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                               "cublasLtMatmulDescCreate"));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  const cublasLtMatmulMatrixScale_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const cublasLtMatmulMatrixScale_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  DI_RETURN_IF_ERROR(cublas_status(
      cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof(a_mode)),
      "cublasLtMatmulDescSetAttribute(A_SCALE_MODE)"));
  DI_RETURN_IF_ERROR(cublas_status(
      cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof(b_mode)),
      "cublasLtMatmulDescSetAttribute(B_SCALE_MODE)"));
  const void* a_scale = w.scale;
  const void* b_scale = x_scales;
  cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale));
  cublasLtMatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale));
  const uint64_t N = static_cast<uint64_t>(w.rows), K = static_cast<uint64_t>(w.cols), Mu = static_cast<uint64_t>(M);
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatrixLayoutCreate(&call.a, CUDA_R_8F_E4M3, K, N, static_cast<int64_t>(K)),
                               "cublasLtMatrixLayoutCreate(A)"));
  DI_RETURN_IF_ERROR(
      cublas_status(cublasLtMatrixLayoutCreate(&call.b, CUDA_R_8F_E4M3, K, Mu, ldx), "cublasLtMatrixLayoutCreate(B)"));
  DI_RETURN_IF_ERROR(
      cublas_status(cublasLtMatrixLayoutCreate(&call.c, CUDA_R_32F, N, Mu, ldy), "cublasLtMatrixLayoutCreate(C)"));
  DI_ASSIGN_OR_RETURN(const Algo* chosen, algo(M, w, ldx, ldy, call.desc, call.a, call.b, call.c));
  cublasLtMatmulAlgo_t lt_algo;
  std::memcpy(&lt_algo, chosen->bytes, sizeof(lt_algo));
  const float alpha = 1.f, beta = 0.f;
  return cublas_status(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), call.desc, &alpha, w.data, call.a, xq, call.b,
                                  &beta, y, call.c, y, call.c, &lt_algo, workspace_.get(), kWorkspace,
                                  static_cast<cudaStream_t>(stream_)),
                   "cublasLtMatmul (fp8 block-scaled)");
}

}  // namespace di::kernels::cuda
