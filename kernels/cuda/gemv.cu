// gemv_bf16: see gemv.h. A block of 8 warps takes a few weight rows; its warps split K in
// 256-element chunks (a lane 8 elements, one 16-byte load a row), and when K has fewer chunks
// than warps the spare warps take more rows. Every lane keeps R rows x M inputs of sums, so
// R 16-byte weight loads are in flight per chunk, and the rows per block are picked so that a
// thread has about 8-16 loads in flight over its chunks while the grid still covers the SMs twice.
// The sums leave by a warp shuffle tree and the K-warps' partials are added in warp order, so
// (m, n)'s order depends on K alone.
#include <algorithm>
#include <string>

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

// The products of one launch: target t owns blocks first_block[t] .. first_block[t + 1] - 1.
struct GemvTargets {
  int count;
  unsigned first_block[kGemvMaxTargets + 1];
  const __nv_bfloat16* w[kGemvMaxTargets];
  int64_t N[kGemvMaxTargets];
  float* y[kGemvMaxTargets];
  int64_t ldy[kGemvMaxTargets];
};

// kKWarps warps split K; kWarps / kKWarps row groups of R rows each.
template <int R, int MT, int kKWarps, bool kF32X>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const void* __restrict__ x, int M, int64_t K, int64_t ldx,
                                                           const __grid_constant__ GemvTargets targets,
                                                           int64_t group_rows, float beta) {
  pdl_sync();
  constexpr int kGroups = kWarps / kKWarps;
  __shared__ float red[kWarps][R][MT];
  int t = 0;
  while (t + 1 < targets.count && blockIdx.x >= targets.first_block[t + 1]) ++t;
  const int64_t block = blockIdx.x - targets.first_block[t];
  const __nv_bfloat16* __restrict__ w = targets.w[t];
  const int64_t N = targets.N[t], ldy = targets.ldy[t];
  float* __restrict__ y = targets.y[t];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int kw = warp % kKWarps, group = warp / kKWarps;
  const int64_t n0 = (block * kGroups + group) * R;
  // Grouped: a block's rows lie in one group (the launcher sees to it), which reads its own
  // K-wide slice of x.
  const int64_t x0 = group_rows > 0 ? block * kGroups * R / group_rows * K : 0;
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
      load_x8<kF32X>(x, m * ldx + x0 + k, xf);
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
    const int64_t n = (block * kGroups + g) * R + r;
    if (m >= M || n >= N) continue;
    float s = 0.f;
    for (int q = 0; q < kKWarps; ++q) s += red[g * kKWarps + q][r][m];
    float* out = y + m * ldy + n;
    *out = beta != 0.f ? s + beta * *out : s;
  }
}

// One launch's arguments, passed down the template dispatch.
struct GemvCall {
  bool f32x;
  const void* x;
  int M;
  int64_t K, ldx;
  const GemvTarget* targets;
  int count;
  int64_t group_rows;
  float beta;
  cudaStream_t stream;
};

template <int R, int MT, int kKWarps>
void launch(const GemvCall& c) {
  constexpr int64_t rows_per_block = int64_t{R} * (kWarps / kKWarps);
  GemvTargets t{};
  t.count = c.count;
  unsigned blocks = 0;
  for (int i = 0; i < c.count; ++i) {
    t.first_block[i] = blocks;
    t.w[i] = static_cast<const __nv_bfloat16*>(c.targets[i].w);
    t.N[i] = c.targets[i].N;
    t.y[i] = c.targets[i].y;
    t.ldy[i] = c.targets[i].ldy;
    blocks += static_cast<unsigned>((c.targets[i].N + rows_per_block - 1) / rows_per_block);
  }
  t.first_block[c.count] = blocks;
  if (c.f32x)
    launch_pdl(gemv_kernel<R, MT, kKWarps, true>, blocks, kWarps * 32, 0, c.stream, c.x, c.M, c.K, c.ldx, t, c.group_rows, c.beta);
  else
    launch_pdl(gemv_kernel<R, MT, kKWarps, false>, blocks, kWarps * 32, 0, c.stream, c.x, c.M, c.K, c.ldx, t, c.group_rows, c.beta);
}

template <int R, int MT>
void launch_kw(int kw, const GemvCall& c) {
  switch (kw) {
    case 1: return launch<R, MT, 1>(c);
    case 2: return launch<R, MT, 2>(c);
    case 4: return launch<R, MT, 4>(c);
    default: return launch<R, MT, 8>(c);
  }
}

template <int MT>
void launch_r(int r, int kw, const GemvCall& c) {
  switch (r) {
    case 1: return launch_kw<1, MT>(kw, c);
    case 2: return launch_kw<2, MT>(kw, c);
    default: return launch_kw<4, MT>(kw, c);
  }
}

// The rows a group of warps takes (1, 2 or 4) for K and N: more loads in flight per thread while
// the grid keeps two blocks an SM; grouped products keep a block's rows inside one group.
struct GemvShape {
  int kw, r;
};
GemvShape gemv_shape(int64_t K, int64_t N, int64_t group_rows) {
  const int64_t chunks = (K + kChunk - 1) / kChunk;
  const int kw = chunks >= 8 ? 8 : chunks >= 4 ? 4 : chunks >= 2 ? 2 : 1;
  const int64_t per_warp = (chunks + kw - 1) / kw, groups = kWarps / kw;
  const int64_t min_blocks = 2 * int64_t{device_sm_count()};
  int r = 1;
  for (int cand : {2, 4}) {
    if (r * per_warp >= 8) break;
    if ((N + cand * groups - 1) / (cand * groups) < min_blocks) break;
    if (group_rows > 0 && group_rows % (cand * groups) != 0) break;
    r = cand;
  }
  return {kw, r};
}

Status run_gemv(const GemvCall& c) {
  int64_t N = 0;
  for (int i = 0; i < c.count; ++i) N += c.targets[i].N;
  const GemvShape sh = gemv_shape(c.K, N, c.group_rows);
  if (c.M == 1) launch_r<1>(sh.r, sh.kw, c);
  else if (c.M == 2) launch_r<2>(sh.r, sh.kw, c);
  else launch_r<4>(sh.r, sh.kw, c);
  return launch_status("gemv_bf16");
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
  const GemvTarget target{w, N, y, ldy};
  return run_gemv({x_type == DType::kF32, x, static_cast<int>(M), K, ldx, &target, 1, 0, beta, as_stream(stream)});
}

Status gemv_bf16_many(const void* x, DType x_type, int64_t M, int64_t K, int64_t ldx, const GemvTarget* targets,
                      int count, void* stream) {
  if (count < 1 || count > kGemvMaxTargets)
    return Status::invalid_argument("gemv_bf16_many: " + std::to_string(count) + " products, not 1 to " +
                                    std::to_string(kGemvMaxTargets));
  for (int i = 0; i < count; ++i) {
    const GemvTarget& t = targets[i];
    if (!gemv_fits(M, K, ldx, x, t.w) || t.N <= 0 || t.ldy < t.N)
      return Status::invalid_argument("gemv_bf16_many: product " + std::to_string(i) +
                                      " does not fit (see gemv_fits; N > 0, ldy >= N)");
  }
  return run_gemv({x_type == DType::kF32, x, static_cast<int>(M), K, ldx, targets, count, 0, 0.f, as_stream(stream)});
}

bool gemv_grouped_fits(int64_t M, int64_t groups, int64_t K, int64_t N, const void* x, const void* w) {
  if (groups < 1 || N % groups != 0 || !gemv_fits(M, K, groups * K, x, w)) return false;
  // A block's rows must stay in one group: at least its smallest row count (a row per warp group).
  const int64_t chunks = (K + kChunk - 1) / kChunk, kw = chunks >= 8 ? 8 : chunks >= 4 ? 4 : chunks >= 2 ? 2 : 1;
  return (N / groups) % (kWarps / kw) == 0;
}

Status gemv_bf16_grouped(const float* x, int64_t M, int64_t groups, int64_t K, const void* w, int64_t N, float* y,
                         int64_t ldy, void* stream) {
  if (!gemv_grouped_fits(M, groups, K, N, x, w) || ldy < N)
    return Status::invalid_argument("gemv_bf16_grouped: " + std::to_string(M) + " rows, " + std::to_string(groups) +
                                    " groups of " + std::to_string(K) + " inputs to " + std::to_string(N) +
                                    " outputs do not fit (see gemv_grouped_fits)");
  const GemvTarget target{w, N, y, ldy};
  return run_gemv({true, x, static_cast<int>(M), K, groups * K, &target, 1, N / groups, 0.f, as_stream(stream)});
}

}  // namespace di::kernels::cuda
