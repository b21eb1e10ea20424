// mHC kernels: see hyper_connection.h. The small per-row matrices (hc x hc) are computed by one
// thread (V4's hc 4), a warp or the block, each sum in the CPU model's order; the wide loops over
// channels use the block.
// A row is spread over several blocks (each owning a slice of the channels) when the rows alone
// would leave most SMs idle: a decode step has one to a few rows, and one block walking a row's
// hc * hidden floats (64 KiB in V4-Flash) took 23 us a call on an H200, latency not bandwidth.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/hyper_connection.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowThreads = 512;
constexpr int kMixThreads = 256;
constexpr int64_t kMinSliceChannels = 256;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Blocks per row: enough for two per SM over the batch, no slice under kMinSliceChannels.
int64_t row_splits(int64_t rows, int64_t dim) {
  const int64_t want = (2 * int64_t{device_sm_count()} + rows - 1) / rows;
  const int64_t most = std::max<int64_t>(1, dim / kMinSliceChannels);
  return std::clamp<int64_t>(want, 1, most);
}

// This block's channels [begin, end) of a row split gridDim.y ways.
struct Slice {
  int64_t begin, end;
};
__device__ __forceinline__ Slice channel_slice(int64_t dim) {
  const int64_t chunk = (dim + gridDim.y - 1) / gridDim.y;
  const int64_t begin = min(dim, int64_t{blockIdx.y} * chunk);
  return {begin, min(dim, begin + chunk)};
}

template <typename T>
__global__ void hc_embed_kernel(const int32_t* ids, const T* table, int64_t dim, int32_t hc, float* streams) {
  pdl_sync();
  const T* src = table + static_cast<int64_t>(ids[blockIdx.x]) * dim;
  float* dst = streams + static_cast<int64_t>(blockIdx.x) * hc * dim;
  const Slice s = channel_slice(dim);
  for (int64_t d = s.begin + threadIdx.x; d < s.end; d += blockDim.x) {
    const float v = to_f32(src[d]);
    for (int k = 0; k < hc; ++k) dst[k * dim + d] = v;
  }
}

// 1 / rms of a row of n floats (every thread gets it), or 1 when rms_eps < 0 (mixes already normed).
// Every block of a row takes the same sum in the same order (the split count does not enter), so
// the slices agree to the bit and a row's result does not depend on the batch.
__device__ __forceinline__ float row_inv_rms(const float* x, int64_t n, float rms_eps) {
  if (rms_eps < 0.f) return 1.f;
  float ss = 0.f;
  if ((n & 3) == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
#pragma unroll 8
    for (int64_t i = threadIdx.x; i < n / 4; i += blockDim.x) {
      const float4 v = x4[i];
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
#pragma unroll 4
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += x[i] * x[i];
  }
  return rsqrtf(block_sum(ss) / static_cast<float>(n) + rms_eps);
}

// Mixing logit q of row r: the sum of hc_mix's parts in part order ([parts, rows, cols]), or the
// GEMM's single result when parts is 1. The loads go out eight at a time: a loop that waited on
// each was eight L2 round trips, and three of them in a row cost hc_pre ~12 us a call.
__device__ __forceinline__ float mix_at(const float* mixes, int32_t parts, int64_t rows, int64_t cols, int64_t r,
                                        int q) {
  const float* m = mixes + r * cols + q;
  const int64_t step = rows * cols;
  float v = 0.f;
  int32_t p = 0;
  for (; p + 8 <= parts; p += 8) {
    float x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = m[(p + k) * step];
#pragma unroll
    for (int k = 0; k < 8; ++k) v += x[k];
  }
  for (; p < parts; ++p) v += m[p * step];
  return v;
}

// Block (j, p) sums slice p of the width for output j, over every row at once so fn's slice is
// read once; each row's sum is taken in one order that does not depend on the row count.
__global__ void __launch_bounds__(kMixThreads)
    hc_mix_kernel(const float* __restrict__ streams, int64_t rows, int64_t width, const float* __restrict__ fn,
                  int64_t out, float* __restrict__ parts) {
  pdl_sync();
  const int64_t j = blockIdx.x, p = blockIdx.y, slice4 = width / 4 / gridDim.y;
  const float4* w4 = reinterpret_cast<const float4*>(fn + j * width) + p * slice4;
  float acc[kHcMixMaxRows];
#pragma unroll
  for (int r = 0; r < kHcMixMaxRows; ++r) acc[r] = 0.f;
  for (int64_t i = threadIdx.x; i < slice4; i += blockDim.x) {
    const float4 w = w4[i];
#pragma unroll
    for (int r = 0; r < kHcMixMaxRows; ++r) {
      if (r >= rows) break;
      const float4 x = reinterpret_cast<const float4*>(streams + r * width)[p * slice4 + i];
      acc[r] += w.x * x.x + w.y * x.y + w.z * x.z + w.w * x.w;
    }
  }
  __shared__ float red[kMixThreads / 32][kHcMixMaxRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int r = 0; r < kHcMixMaxRows; ++r) {
    if (r >= rows) break;
    const float v = warp_sum(acc[r]);
    if (lane == 0) red[warp][r] = v;
  }
  __syncthreads();
  if (threadIdx.x < rows) {
    float s = 0.f;
    for (int q = 0; q < kMixThreads / 32; ++q) s += red[q][threadIdx.x];
    parts[(p * rows + threadIdx.x) * out + j] = s;
  }
}

// The same softmax and Sinkhorn steps as hc_pre_kernel's block path, for hc * hc <= 32: lane
// t < hc * hc holds entry t, and a row's or column's sum is gathered by shuffles in index order,
// so the result is the block path's (and the CPU loop's) to the bit. All 32 lanes call it.
__device__ __forceinline__ float sinkhorn_in_warp(float c, int hc, int iters, float eps) {
  const int t = threadIdx.x & 31, i = t / hc, j = t % hc;
  auto row_at = [&](int q) { return (i * hc + q) & 31; };
  auto col_at = [&](int q) { return (q * hc + j) & 31; };
  float mx = -INFINITY;
  for (int q = 0; q < hc; ++q) mx = fmaxf(mx, __shfl_sync(0xffffffffu, c, row_at(q)));
  const float e = expf(c - mx);
  float sum = 0.f;
  for (int q = 0; q < hc; ++q) sum += __shfl_sync(0xffffffffu, e, row_at(q));
  c = e / sum + eps;
  for (int it = 0; it < (iters > 1 ? iters : 1); ++it) {
    if (it > 0) {
      float s = 0.f;
      for (int q = 0; q < hc; ++q) s += __shfl_sync(0xffffffffu, c, row_at(q));
      c = c / (s + eps);
    }
    float s = 0.f;
    for (int q = 0; q < hc; ++q) s += __shfl_sync(0xffffffffu, c, col_at(q));
    c = c / (s + eps);
  }
  return c;
}

// Divides each row (kRows) or column of c by its sum + eps, the sum in index order.
template <int HC, bool kRows>
__device__ __forceinline__ void normalize_lines(float (&c)[HC][HC], float eps) {
#pragma unroll
  for (int a = 0; a < HC; ++a) {
    float s = 0.f;
#pragma unroll
    for (int b = 0; b < HC; ++b) s += kRows ? c[a][b] : c[b][a];
    const float inv = __fdividef(1.f, s + eps);
#pragma unroll
    for (int b = 0; b < HC; ++b) (kRows ? c[a][b] : c[b][a]) *= inv;
  }
}

// V4's hc 4: the mix in one thread's registers, each row's or column's sum in index order as the
// CPU loop takes it, then one fast reciprocal (the hardware's, within 2 ulp) and hc products where
// the loop divides hc times: twenty rounds of dependent sums and divisions are the kernel's
// critical path. Within rounding of the CPU's result, not equal to its bits.
template <int HC>
__device__ void sinkhorn_in_thread(const float* logits, int iters, float eps, float* out) {
  float c[HC][HC];
#pragma unroll
  for (int i = 0; i < HC; ++i) {
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < HC; ++j) mx = fmaxf(mx, c[i][j] = logits[i * HC + j]);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < HC; ++j) sum += (c[i][j] = expf(c[i][j] - mx));
    const float inv = __fdividef(1.f, sum);
#pragma unroll
    for (int j = 0; j < HC; ++j) c[i][j] = c[i][j] * inv + eps;
  }
  for (int it = 0; it < (iters > 1 ? iters : 1); ++it) {  // at least the first column pass
    if (it > 0) normalize_lines<HC, true>(c, eps);
    normalize_lines<HC, false>(c, eps);
  }
#pragma unroll
  for (int i = 0; i < HC; ++i)
#pragma unroll
    for (int j = 0; j < HC; ++j) out[i * HC + j] = c[i][j];
}

// Grid (rows, splits): every block of a row derives pre and collapses its slice; the row's first
// block also writes post and comb, its Sinkhorn steps after the collapse so the other warps'
// loads overlap them.
__global__ void __launch_bounds__(kRowThreads)
    hc_pre_kernel(const float* mixes, int32_t mix_parts, const float* base, const float* scale, const float* streams,
                  int32_t hc, int64_t dim, int32_t iters, float eps, float rms_eps, float* collapsed, float* post,
                  float* comb) {
  pdl_sync();
  __shared__ float pre[kMaxHcStreams], mix[(2 + kMaxHcStreams) * kMaxHcStreams];
  __shared__ float cm[kMaxHcStreams * kMaxHcStreams], tmp[kMaxHcStreams * kMaxHcStreams];
  const int64_t r = blockIdx.x, rows = gridDim.x;
  const int cols = (2 + hc) * hc, n = hc * hc, t = threadIdx.x, i = t / hc, j = t % hc;
  const bool first = blockIdx.y == 0;
  // Only the first block reads the mix's hc * hc comb logits.
  for (int q = t; q < (first ? cols : 2 * hc); q += blockDim.x) mix[q] = mix_at(mixes, mix_parts, rows, cols, r, q);
  __syncthreads();
  const float* x = streams + r * hc * dim;
  const float inv = row_inv_rms(x, hc * dim, rms_eps);
  auto m = [&](int q) { return mix[q]; };
  if (t < hc) pre[t] = sigmoid(m(t) * inv * scale[0] + base[t]) + eps;
  if (first && t < hc) post[r * hc + t] = 2.0f * sigmoid(m(hc + t) * inv * scale[1] + base[hc + t]);
  if (first && t < n) cm[t] = m(2 * hc + t) * inv * scale[2] + base[2 * hc + t];
  __syncthreads();  // pre, cm
  const Slice s = channel_slice(dim);
  for (int64_t d = s.begin + t; d < s.end; d += blockDim.x) {
    float acc = 0.f;
    for (int k = 0; k < hc; ++k) acc += pre[k] * x[k * dim + d];
    collapsed[r * dim + d] = acc;
  }
  if (!first) return;
  if (hc == 4) {
    if (t == 0) sinkhorn_in_thread<4>(cm, iters, eps, comb + r * n);
  } else if (n <= 32) {  // a lane per entry, no block syncs per Sinkhorn step
    if (t < 32) {
      const float v = sinkhorn_in_warp(t < n ? cm[t] : 0.f, hc, iters, eps);
      if (t < n) comb[r * n + t] = v;
    }
  } else {
    if (t < n) {
      float mx = -INFINITY;
      for (int q = 0; q < hc; ++q) mx = fmaxf(mx, cm[i * hc + q]);
      tmp[t] = expf(cm[t] - mx);
    }
    __syncthreads();
    if (t < n) {
      float sum = 0.f;
      for (int q = 0; q < hc; ++q) sum += tmp[i * hc + q];
      cm[t] = tmp[t] / sum + eps;
    }
    __syncthreads();
    for (int it = 0; it < (iters > 1 ? iters : 1); ++it) {  // at least the first column pass
      if (it > 0) {
        float v = 0.f;
        if (t < n) {
          float s = 0.f;
          for (int q = 0; q < hc; ++q) s += cm[i * hc + q];
          v = cm[t] / (s + eps);
        }
        __syncthreads();
        if (t < n) cm[t] = v;
        __syncthreads();
      }
      float v = 0.f;
      if (t < n) {
        float s = 0.f;
        for (int q = 0; q < hc; ++q) s += cm[q * hc + j];
        v = cm[t] / (s + eps);
      }
      __syncthreads();
      if (t < n) cm[t] = v;
      __syncthreads();
    }
    if (t < n) comb[r * n + t] = cm[t];
  }
}

// A block row per token row (no 64-bit division per element), its mixing weights in shared
// memory; four channels a thread where the width allows. Each channel's sums run in the same order
// as one channel a thread did, so the bits do not depend on the layout. HC > 0: hc known at
// compile time (the streams stay in registers), 0: any hc.
template <int HC, int V>
__device__ __forceinline__ void hc_post_channels(const float* o, const float* cm, const float* pr, int32_t hc_any,
                                                 int64_t dim, float* x, int64_t d) {
  const int hc = HC > 0 ? HC : hc_any;
  // V = 4: 16-byte accesses (dim % 4 == 0, so every stream's row stays aligned).
  auto load = [&](const float* p, float (&r)[V]) {
    if constexpr (V == 4) {
      const float4 f = *reinterpret_cast<const float4*>(p);
      r[0] = f.x, r[1] = f.y, r[2] = f.z, r[3] = f.w;
    } else {
      r[0] = *p;
    }
  };
  float old[HC > 0 ? HC : kMaxHcStreams][V];
#pragma unroll
  for (int j = 0; j < hc; ++j) load(x + j * dim + d, old[j]);
  float ov[V];
  load(o + d, ov);
#pragma unroll
  for (int k = 0; k < hc; ++k) {
    float y[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      float acc = 0.f;
#pragma unroll
      for (int j = 0; j < hc; ++j) acc += cm[j * hc + k] * old[j][v];
      y[v] = pr[k] * ov[v] + acc;
    }
    if constexpr (V == 4) {
      *reinterpret_cast<float4*>(x + k * dim + d) = make_float4(y[0], y[1], y[2], y[3]);
    } else {
      x[k * dim + d] = y[0];
    }
  }
}

template <int HC>
__global__ void hc_post_kernel(const float* out, const float* post, const float* comb, int64_t rows, int32_t hc,
                               int64_t dim, float* streams) {
  pdl_sync();
  __shared__ float cm[kMaxHcStreams * kMaxHcStreams], pr[kMaxHcStreams];
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    __syncthreads();  // the last row's weights are read
    for (int i = threadIdx.x; i < hc * hc; i += blockDim.x) cm[i] = comb[r * hc * hc + i];
    for (int i = threadIdx.x; i < hc; i += blockDim.x) pr[i] = post[r * hc + i];
    __syncthreads();
    float* x = streams + r * hc * dim;
    const float* o = out + r * dim;
    for (int64_t d = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * 4; d < dim;
         d += int64_t{gridDim.x} * blockDim.x * 4) {
      if (dim % 4 == 0) {
        hc_post_channels<HC, 4>(o, cm, pr, hc, dim, x, d);
      } else {
        for (int64_t e = d; e < d + 4 && e < dim; ++e) hc_post_channels<HC, 1>(o, cm, pr, hc, dim, x, e);
      }
    }
  }
}

__global__ void __launch_bounds__(kRowThreads)
    hc_head_kernel(const float* mixes, int32_t mix_parts, const float* base, const float* scale,
                   const float* streams, int32_t hc, int64_t dim, float eps, float rms_eps, float* y) {
  pdl_sync();
  __shared__ float pre[kMaxHcStreams], mix[kMaxHcStreams];
  const int64_t r = blockIdx.x, rows = gridDim.x;
  if (threadIdx.x < hc) mix[threadIdx.x] = mix_at(mixes, mix_parts, rows, hc, r, threadIdx.x);
  __syncthreads();
  const float* x = streams + r * hc * dim;
  const float inv = row_inv_rms(x, hc * dim, rms_eps);
  if (threadIdx.x < hc) pre[threadIdx.x] = sigmoid(mix[threadIdx.x] * inv * scale[0] + base[threadIdx.x]) + eps;
  __syncthreads();
  const Slice s = channel_slice(dim);
  for (int64_t d = s.begin + threadIdx.x; d < s.end; d += blockDim.x) {
    float acc = 0.f;
    for (int i = 0; i < hc; ++i) acc += pre[i] * x[i * dim + d];
    y[r * dim + d] = acc;
  }
}

Status check_hc(int32_t hc) {
  if (hc < 1 || hc > kMaxHcStreams)
    return Status::invalid_argument("hyper-connections: hc_mult " + std::to_string(hc) + " is outside [1, " +
                                    std::to_string(kMaxHcStreams) + "]");
  return Status::ok();
}

Status check_parts(int32_t parts) {
  if (parts < 1) return Status::invalid_argument("hyper-connections: " + std::to_string(parts) + " mix parts");
  return Status::ok();
}

}  // namespace

Status hc_embed(const int32_t* ids, int64_t rows, const void* table, int64_t dim, int32_t hc, DType dtype,
                float* streams, void* stream) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    const dim3 grid(static_cast<uint32_t>(rows), static_cast<uint32_t>(row_splits(rows, dim)));
    launch_pdl(hc_embed_kernel<T>, grid, kRowThreads, 0, as_stream(stream), ids, static_cast<const T*>(table), dim, hc, streams);
    return launch_status("hc_embed");
  });
}

bool hc_mix_fits(int64_t rows, int64_t width, int64_t out, const float* streams, const float* fn) {
  const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  return rows >= 1 && rows <= kHcMixMaxRows && out >= 1 && out <= 65535 && width % (4 * hc_mix_parts(out)) == 0 &&
         aligned(streams) && aligned(fn);
}

Status hc_mix(const float* streams, int64_t rows, int64_t width, const float* fn, int64_t out, float* parts,
              void* stream) {
  if (!hc_mix_fits(rows, width, out, streams, fn))
    return Status::invalid_argument("hc_mix: " + std::to_string(rows) + " rows of width " + std::to_string(width) +
                                    " to " + std::to_string(out) + " outputs do not fit (at most " +
                                    std::to_string(kHcMixMaxRows) + " rows, width a multiple of " +
                                    std::to_string(4 * hc_mix_parts(out)) + ", 16-byte aligned)");
  const dim3 grid(static_cast<uint32_t>(out), static_cast<uint32_t>(hc_mix_parts(out)));
  launch_pdl(hc_mix_kernel, grid, kMixThreads, 0, as_stream(stream), streams, rows, width, fn, out, parts);
  return launch_status("hc_mix");
}

Status hc_pre(const float* mixes, int32_t mix_parts, const float* base, const float* scale, const float* streams,
              int64_t rows, int32_t hc, int64_t dim, int32_t sinkhorn_iters, float eps, float* collapsed, float* post,
              float* comb, void* stream, float rms_eps) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  DI_RETURN_IF_ERROR(check_parts(mix_parts));
  const dim3 grid(static_cast<uint32_t>(rows), static_cast<uint32_t>(row_splits(rows, dim)));
  launch_pdl(hc_pre_kernel, grid, kRowThreads, 0, as_stream(stream), mixes, mix_parts, base, scale, streams, hc, dim,
                                                         sinkhorn_iters, eps, rms_eps, collapsed, post, comb);
  return launch_status("hc_pre");
}

Status hc_post(const float* out, const float* post, const float* comb, int64_t rows, int32_t hc, int64_t dim,
               float* streams, void* stream) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  const int64_t col_blocks = (dim + 4 * kThreads - 1) / (4 * kThreads);
  const dim3 grid(static_cast<uint32_t>(col_blocks), static_cast<uint32_t>(std::min<int64_t>(rows, 65535)));
  // V4 ships hc_mult 4.
  launch_pdl(hc == 4 ? hc_post_kernel<4> : hc_post_kernel<0>, grid, kThreads, 0, as_stream(stream), out, post, comb,
             rows, hc, dim, streams);
  return launch_status("hc_post");
}

Status hc_head(const float* mixes, int32_t mix_parts, const float* base, const float* scale, const float* streams,
               int64_t rows, int32_t hc, int64_t dim, float eps, float* y, void* stream, float rms_eps) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  DI_RETURN_IF_ERROR(check_parts(mix_parts));
  const dim3 grid(static_cast<uint32_t>(rows), static_cast<uint32_t>(row_splits(rows, dim)));
  launch_pdl(hc_head_kernel, grid, kRowThreads, 0, as_stream(stream), mixes, mix_parts, base, scale, streams, hc, dim, eps,
                                                          rms_eps, y);
  return launch_status("hc_head");
}

}  // namespace di::kernels::cuda
