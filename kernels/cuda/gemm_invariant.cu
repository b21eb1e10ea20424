// InvariantGemm: see gemm_invariant.h. Row-major y = x W^T is the column-major product
// y^T[N, M] = W[K, N]^T x^T[K, M], as in gemm.cu: W is operand A (transposed), x operand B.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "kernels/cuda/cublas_util.h"
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/gemm_invariant.h"

namespace di::kernels::cuda {
namespace {

static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "InvariantGemm::Plan holds a cublasLtMatmulAlgo_t");

// The M the heuristic plans for (a mid-sized decode batch), and the row counts the plan must
// be accepted for: one row, and a large prefill.
constexpr int64_t kPlanRows = 64;
constexpr int64_t kCheckRows[] = {1, 7, 4096};
constexpr int kHeuristicResults = 16;

cudaDataType_t lt_type(DType t) { return t == DType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

// The largest power of two up to 16 dividing the address and every byte stride given.
int64_t alignment(const void* p, int64_t a_bytes, int64_t b_bytes) {
  int64_t a = 16;
  const uint64_t bits = reinterpret_cast<uintptr_t>(p) | static_cast<uint64_t>(a_bytes) | static_cast<uint64_t>(b_bytes);
  while (a > 1 && (bits & static_cast<uint64_t>(a - 1))) a >>= 1;
  return a;
}

Status batch_layout(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  if (batch <= 1) return Status::ok();
  const int32_t count = static_cast<int32_t>(batch);
  DI_RETURN_IF_ERROR(cublas_status(
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), "batch count"));
  return cublas_status(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                    sizeof(stride)),
                   "batch stride");
}

Status make_descs(const GemmCall& c, int64_t M, LtMatmulDescs& d) {
  // fp32 operands stay on fp32 FMA: cuBLASLt uses TF32 only when asked (COMPUTE_32F_FAST_TF32).
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatmulDescCreate(&d.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc"));
  const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  DI_RETURN_IF_ERROR(
      cublas_status(cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)), "transa"));
  DI_RETURN_IF_ERROR(
      cublas_status(cublasLtMatmulDescSetAttribute(d.desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n)), "transb"));
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatrixLayoutCreate(&d.a, lt_type(c.in_type), c.K, c.N, c.K), "layout W"));
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatrixLayoutCreate(&d.b, lt_type(c.in_type), c.K, M, c.lda), "layout x"));
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatrixLayoutCreate(&d.c, lt_type(c.out_type), c.N, M, c.ldc), "layout y"));
  DI_RETURN_IF_ERROR(batch_layout(d.a, c.batch, c.stride_w));
  DI_RETURN_IF_ERROR(batch_layout(d.b, c.batch, c.stride_x));
  return batch_layout(d.c, c.batch, c.stride_y);
}

// One output per thread of a 16 x 16 block; K in 16-wide shared tiles, summed in ascending order.
constexpr int kTile = 16;

template <typename Tin, typename Tout>
__global__ void fallback_kernel(GemmCall c) {
  __shared__ float xs[kTile][kTile + 1], ws[kTile][kTile + 1];
  const int64_t b = blockIdx.z;
  const auto* x = static_cast<const Tin*>(c.x) + b * c.stride_x;
  const auto* w = static_cast<const Tin*>(c.w) + b * c.stride_w;
  auto* y = static_cast<Tout*>(c.y) + b * c.stride_y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t m = int64_t{blockIdx.y} * kTile + ty, n = int64_t{blockIdx.x} * kTile + tx;
  const int64_t wrow = int64_t{blockIdx.x} * kTile + ty;  // the W row this thread stages
  float acc = 0.f;
  for (int64_t k0 = 0; k0 < c.K; k0 += kTile) {
    const int64_t k = k0 + tx;
    xs[ty][tx] = m < c.M && k < c.K ? to_f32(x[m * c.lda + k]) : 0.f;
    ws[ty][tx] = wrow < c.N && k < c.K ? to_f32(w[wrow * c.K + k]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc = fmaf(xs[ty][i], ws[tx][i], acc);
    __syncthreads();
  }
  if (m >= c.M || n >= c.N) return;
  Tout* out = y + m * c.ldc + n;
  if (c.beta != 0.f) acc += c.beta * to_f32(*out);
  *out = from_f32<Tout>(acc);
}

template <typename Tin, typename Tout>
Status launch_fallback(const GemmCall& c, void* stream) {
  const dim3 grid(static_cast<unsigned>((c.N + kTile - 1) / kTile), static_cast<unsigned>((c.M + kTile - 1) / kTile),
                  static_cast<unsigned>(c.batch));
  fallback_kernel<Tin, Tout><<<grid, dim3(kTile, kTile), 0, static_cast<cudaStream_t>(stream)>>>(c);
  return cuda_status(cudaGetLastError(), "invariant_gemm_fallback");
}

}  // namespace

Status invariant_gemm_fallback(const GemmCall& c, void* stream) {
  if (c.M == 0) return Status::ok();
  if ((c.N + kTile - 1) / kTile > 0x7fffffff || (c.M + kTile - 1) / kTile > 65535 || c.batch > 65535)
    return Status::invalid_argument("invariant_gemm_fallback: M=" + std::to_string(c.M) + " batch=" +
                                    std::to_string(c.batch) + " exceed the grid");
  const bool f32_in = c.in_type == DType::kF32, f32_out = c.out_type == DType::kF32;
  if (f32_in && f32_out) return launch_fallback<float, float>(c, stream);
  if (f32_in) return launch_fallback<float, __nv_bfloat16>(c, stream);
  if (f32_out) return launch_fallback<__nv_bfloat16, float>(c, stream);
  return launch_fallback<__nv_bfloat16, __nv_bfloat16>(c, stream);
}

Result<InvariantGemm*> InvariantGemm::create(void* stream, void* workspace, int64_t workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  DI_RETURN_IF_ERROR(cublas_status(cublasLtCreate(&h), "cublasLtCreate"));
  auto* g = new InvariantGemm();
  g->lt_ = h;
  g->stream_ = stream;
  g->workspace_ = workspace;
  g->workspace_bytes_ = workspace_bytes;
  return g;
}

InvariantGemm::~InvariantGemm() {
  if (lt_) cublasLtDestroy(static_cast<cublasLtHandle_t>(lt_));
}

int64_t InvariantGemm::own_kernel_plans() const {
  int64_t n = 0;
  for (const auto& [key, plan] : plans_) n += plan.lt ? 0 : 1;
  return n;
}

Result<InvariantGemm::Plan> InvariantGemm::make_plan(const GemmCall& c, int64_t align) {
  Plan plan;
  auto lt = static_cast<cublasLtHandle_t>(lt_);
  LtMatmulDescs d;
  DI_RETURN_IF_ERROR(make_descs(c, kPlanRows, d));
  cublasLtMatmulPreference_t pref = nullptr;
  DI_RETURN_IF_ERROR(cublas_status(cublasLtMatmulPreferenceCreate(&pref), "preference"));
  const uint64_t ws = static_cast<uint64_t>(workspace_bytes_);
  const uint32_t a_w = static_cast<uint32_t>(align & 0xff), a_x = static_cast<uint32_t>((align >> 8) & 0xff),
                 a_y = static_cast<uint32_t>((align >> 16) & 0xff);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &a_w, sizeof(a_w));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &a_x, sizeof(a_x));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &a_y, sizeof(a_y));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &a_y, sizeof(a_y));
  cublasLtMatmulHeuristicResult_t results[kHeuristicResults];
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(lt, d.desc, d.a, d.b, d.c, d.c, pref, kHeuristicResults, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS) found = 0;  // no algorithm: the own kernel
  for (int i = 0; i < found && !plan.lt; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    cublasLtMatmulAlgo_t algo = results[i].algo;
    // One CTA owns each output tile and walks all of K: no split, so nothing sums partial
    // products in an order the grid (and so M) decides.
    const uint32_t one = 1, none = CUBLASLT_REDUCTION_SCHEME_NONE;
    if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof(one)) !=
            CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &none, sizeof(none)) !=
            CUBLAS_STATUS_SUCCESS)
      continue;
    bool ok = true;
    for (int64_t rows : kCheckRows) {
      LtMatmulDescs at;
      DI_RETURN_IF_ERROR(make_descs(c, rows, at));
      cublasLtMatmulHeuristicResult_t check;
      if (cublasLtMatmulAlgoCheck(lt, at.desc, at.a, at.b, at.c, at.c, &algo, &check) != CUBLAS_STATUS_SUCCESS ||
          check.workspaceSize > ws) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    plan.lt = true;
    std::memcpy(plan.algo.data(), &algo, sizeof(algo));
  }
  return plan;
}

Status InvariantGemm::run_lt(const Plan& p, const GemmCall& c, int64_t /*align*/) {
  LtMatmulDescs d;
  DI_RETURN_IF_ERROR(make_descs(c, c.M, d));
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, p.algo.data(), sizeof(algo));
  const float alpha = 1.f;
  return cublas_status(cublasLtMatmul(static_cast<cublasLtHandle_t>(lt_), d.desc, &alpha, c.w, d.a, c.x, d.b, &c.beta,
                                  c.y, d.c, c.y, d.c, &algo, workspace_, static_cast<size_t>(workspace_bytes_),
                                  static_cast<cudaStream_t>(stream_)),
                   "cublasLtMatmul (batch-invariant)");
}

Status InvariantGemm::run(const GemmCall& c) {
  if (c.M == 0) return Status::ok();
  const int64_t ein = dtype_bytes(c.in_type), eout = dtype_bytes(c.out_type);
  const int64_t align = alignment(c.w, c.K * ein, c.stride_w * ein) |
                        alignment(c.x, c.lda * ein, c.stride_x * ein) << 8 |
                        alignment(c.y, c.ldc * eout, c.stride_y * eout) << 16;
  const Key key{c.N,     c.K,       c.lda, c.ldc, c.stride_x, c.stride_w, c.stride_y, c.batch,
                static_cast<int64_t>(c.in_type), static_cast<int64_t>(c.out_type), c.beta != 0.f ? 1 : 0, align};
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    DI_ASSIGN_OR_RETURN(Plan p, make_plan(c, align));
    it = plans_.emplace(key, p).first;
  }
  if (!it->second.lt) return invariant_gemm_fallback(c, stream_);
  // The plan was checked for one row, a few and thousands; an M cuBLASLt still turns down fails
  // the call rather than silently taking another kernel.
  return run_lt(it->second, c, align);
}

}  // namespace di::kernels::cuda
