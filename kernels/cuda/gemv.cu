// gemv_bf16: see gemv.h. A block of 8 warps takes a few weight rows; its warps split K in
// 256-element chunks (a lane 8 elements, one 16-byte load a row), and when K has fewer chunks
// than warps the spare warps take more rows. Every lane keeps R rows x M inputs of sums, so
// R 16-byte weight loads are in flight per chunk, and the rows per block are picked so that a
// thread has about 8-16 loads in flight over its chunks while the grid still covers the SMs twice.
// The sums leave by a warp shuffle tree and the K-warps' partials are added in warp order, so
// (m, n)'s order depends on K alone.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/gemv.h"

namespace di::kernels::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kChunk = 256;  // elements of K per warp and load step

__device__ __forceinline__ void unpack_bf16x8(const uint4& v, float (&f)[8]) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(u[i] << 16);
    f[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
  }
}

// x[k..k+8) as floats of bf16 precision.
template <bool kF32X>
__device__ __forceinline__ void load_x8(const void* x, int64_t off, float (&f)[8]) {
  if constexpr (kF32X) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(x) + off);
    const float4 a = __ldg(p), b = __ldg(p + 1);
    const float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = __bfloat162float(__float2bfloat16(v[i]));
  } else {
    unpack_bf16x8(__ldg(reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(x) + off)), f);
  }
}

// kKWarps warps split K; kWarps / kKWarps row groups of R rows each.
template <int R, int MT, int kKWarps, bool kF32X>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const void* __restrict__ x, int M, int64_t K, int64_t ldx,
                                                           const __nv_bfloat16* __restrict__ w, int64_t N,
                                                           float* __restrict__ y, int64_t ldy, float beta) {
  constexpr int kGroups = kWarps / kKWarps;
  __shared__ float red[kWarps][R][MT];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int kw = warp % kKWarps, group = warp / kKWarps;
  const int64_t n0 = (int64_t{blockIdx.x} * kGroups + group) * R;
  float acc[R][MT];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[r][m] = 0.f;
  const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll 2
  for (int64_t k = int64_t{kw} * kChunk + lane * 8; k < K; k += int64_t{kKWarps} * kChunk) {
    uint4 wv[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      wv[r] = n0 + r < N ? __ldcs(reinterpret_cast<const uint4*>(w + (n0 + r) * K + k)) : zero;
    float wf[R][8];
#pragma unroll
    for (int r = 0; r < R; ++r) unpack_bf16x8(wv[r], wf[r]);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= M) break;
      float xf[8];
      load_x8<kF32X>(x, m * ldx + k, xf);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[r][m] = fmaf(wf[r][i], xf[i], acc[r][m]);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const float s = warp_sum(acc[r][m]);
      if (lane == 0) red[warp][r][m] = s;
    }
  __syncthreads();
  for (int i = threadIdx.x; i < kGroups * R * MT; i += blockDim.x) {
    const int g = i / (R * MT), r = (i / MT) % R, m = i % MT;
    const int64_t n = (int64_t{blockIdx.x} * kGroups + g) * R + r;
    if (m >= M || n >= N) continue;
    float s = 0.f;
    for (int q = 0; q < kKWarps; ++q) s += red[g * kKWarps + q][r][m];
    float* out = y + m * ldy + n;
    *out = beta != 0.f ? s + beta * *out : s;
  }
}

template <int R, int MT, int kKWarps>
void launch(bool f32x, const void* x, int M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y, int64_t ldy,
            float beta, cudaStream_t stream) {
  constexpr int64_t rows_per_block = int64_t{R} * (kWarps / kKWarps);
  const unsigned blocks = static_cast<unsigned>((N + rows_per_block - 1) / rows_per_block);
  const auto* wb = static_cast<const __nv_bfloat16*>(w);
  if (f32x)
    gemv_kernel<R, MT, kKWarps, true><<<blocks, kWarps * 32, 0, stream>>>(x, M, K, ldx, wb, N, y, ldy, beta);
  else
    gemv_kernel<R, MT, kKWarps, false><<<blocks, kWarps * 32, 0, stream>>>(x, M, K, ldx, wb, N, y, ldy, beta);
}

template <int R, int MT>
void launch_kw(int kw, bool f32x, const void* x, int M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
               int64_t ldy, float beta, cudaStream_t s) {
  switch (kw) {
    case 1: return launch<R, MT, 1>(f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
    case 2: return launch<R, MT, 2>(f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
    case 4: return launch<R, MT, 4>(f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
    default: return launch<R, MT, 8>(f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
  }
}

template <int MT>
void launch_r(int r, int kw, bool f32x, const void* x, int M, int64_t K, int64_t ldx, const void* w, int64_t N,
              float* y, int64_t ldy, float beta, cudaStream_t s) {
  switch (r) {
    case 1: return launch_kw<1, MT>(kw, f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
    case 2: return launch_kw<2, MT>(kw, f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
    default: return launch_kw<4, MT>(kw, f32x, x, M, K, ldx, w, N, y, ldy, beta, s);
  }
}

}  // namespace

bool gemv_fits(int64_t M, int64_t K, int64_t ldx, const void* x, const void* w) {
  return M >= 1 && M <= kGemvMaxRows && K > 0 && K % 8 == 0 && ldx % 8 == 0 && ldx >= K &&
         (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w)) % 16 == 0;
}

Status gemv_bf16(const void* x, DType x_type, int64_t M, int64_t K, int64_t ldx, const void* w, int64_t N, float* y,
                 int64_t ldy, float beta, void* stream) {
  if (!gemv_fits(M, K, ldx, x, w) || N <= 0 || ldy < N)
    return Status::invalid_argument("gemv_bf16: needs 1 <= M <= 8, K and ldx multiples of 8, ldx >= K, ldy >= N, "
                                    "x and W 16-byte aligned");
  // Warps over K: as many as K has chunks, up to the block's 8.
  const int64_t chunks = (K + kChunk - 1) / kChunk;
  const int kw = chunks >= 8 ? 8 : chunks >= 4 ? 4 : chunks >= 2 ? 2 : 1;
  const int64_t per_warp = (chunks + kw - 1) / kw, groups = kWarps / kw;
  // Rows per group: more loads in flight per thread while the grid keeps two blocks an SM.
  const int64_t min_blocks = 2 * int64_t{device_sm_count()};
  int r = 1;
  for (int cand : {2, 4}) {
    if (r * per_warp >= 8) break;
    if ((N + cand * groups - 1) / (cand * groups) < min_blocks) break;
    r = cand;
  }
  const bool f32x = x_type == DType::kF32;
  const int m = static_cast<int>(M);
  auto s = as_stream(stream);
  if (M == 1) launch_r<1>(r, kw, f32x, x, m, K, ldx, w, N, y, ldy, beta, s);
  else if (M == 2) launch_r<2>(r, kw, f32x, x, m, K, ldx, w, N, y, ldy, beta, s);
  else launch_r<4>(r, kw, f32x, x, m, K, ldx, w, N, y, ldy, beta, s);
  return launch_status("gemv_bf16");
}

}  // namespace di::kernels::cuda
