// mHC kernels: see hyper_connection.h. The small per-row matrices (hc x hc) are computed by one
// thread into shared memory, in the CPU model's order; the wide loops over channels use the block.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/hyper_connection.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// A row's collapse and its RMS read hc * hidden floats (64 KiB in V4-Flash) in one block: many
// threads keep many loads in flight when a decode step has few rows.
constexpr int kRowThreads = 1024;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

template <typename T>
__global__ void hc_embed_kernel(const int32_t* ids, const T* table, int64_t dim, int32_t hc, float* streams) {
  const T* src = table + static_cast<int64_t>(ids[blockIdx.x]) * dim;
  float* dst = streams + static_cast<int64_t>(blockIdx.x) * hc * dim;
  for (int64_t i = threadIdx.x; i < hc * dim; i += blockDim.x) dst[i] = to_f32(src[i % dim]);
}

// 1 / rms of a row of n floats (every thread gets it), or 1 when rms_eps < 0 (mixes already normed).
__device__ __forceinline__ float row_inv_rms(const float* x, int64_t n, float rms_eps) {
  if (rms_eps < 0.f) return 1.f;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += x[i] * x[i];
  return rsqrtf(block_sum(ss) / static_cast<float>(n) + rms_eps);
}

// A thread per entry of the hc x hc mix; each row (column) sum is taken by every thread of that
// row (column) in index order, so the result is the sequential loop's to the bit.
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

__global__ void hc_pre_kernel(const float* mixes, const float* base, const float* scale, const float* streams,
                              int32_t hc, int64_t dim, int32_t iters, float eps, float rms_eps, float* collapsed,
                              float* post, float* comb) {
  __shared__ float pre[kMaxHcStreams];
  __shared__ float cm[kMaxHcStreams * kMaxHcStreams], tmp[kMaxHcStreams * kMaxHcStreams];
  const int64_t r = blockIdx.x;
  const float* x = streams + r * hc * dim;
  const float inv = row_inv_rms(x, hc * dim, rms_eps);
  const float* m = mixes + r * (2 + hc) * hc;
  const int n = hc * hc, t = threadIdx.x, i = t / hc, j = t % hc;
  if (t < hc) {
    pre[t] = sigmoid(m[t] * inv * scale[0] + base[t]) + eps;
    post[r * hc + t] = 2.0f * sigmoid(m[hc + t] * inv * scale[1] + base[hc + t]);
  }
  if (n <= 32) {  // V4's hc 4: the mix in one warp's registers, no block syncs per Sinkhorn step
    if (t < 32) {
      const float c = t < n ? m[2 * hc + t] * inv * scale[2] + base[2 * hc + t] : 0.f;
      const float v = sinkhorn_in_warp(c, hc, iters, eps);
      if (t < n) comb[r * n + t] = v;
    }
    __syncthreads();  // pre
  } else {
    if (t < n) cm[t] = m[2 * hc + t] * inv * scale[2] + base[2 * hc + t];
    __syncthreads();
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
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    float acc = 0.f;
    for (int k = 0; k < hc; ++k) acc += pre[k] * x[k * dim + d];
    collapsed[r * dim + d] = acc;
  }
}

__global__ void hc_post_kernel(const float* out, const float* post, const float* comb, int64_t rows, int32_t hc,
                               int64_t dim, float* streams) {
  const int64_t n = rows * dim;
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n; t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = t / dim, d = t % dim;
    float* x = streams + r * hc * dim;
    float old[kMaxHcStreams];
    for (int j = 0; j < hc; ++j) old[j] = x[j * dim + d];
    const float* cm = comb + r * hc * hc;
    const float o = out[r * dim + d];
    for (int k = 0; k < hc; ++k) {
      float acc = 0.f;
      for (int j = 0; j < hc; ++j) acc += cm[j * hc + k] * old[j];
      x[k * dim + d] = post[r * hc + k] * o + acc;
    }
  }
}

__global__ void hc_head_kernel(const float* mixes, const float* base, const float* scale, const float* streams,
                               int32_t hc, int64_t dim, float eps, float rms_eps, float* y) {
  __shared__ float pre[kMaxHcStreams];
  const int64_t r = blockIdx.x;
  const float* x = streams + r * hc * dim;
  const float inv = row_inv_rms(x, hc * dim, rms_eps);
  if (threadIdx.x < hc)
    pre[threadIdx.x] = sigmoid(mixes[r * hc + threadIdx.x] * inv * scale[0] + base[threadIdx.x]) + eps;
  __syncthreads();
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
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

}  // namespace

Status hc_embed(const int32_t* ids, int64_t rows, const void* table, int64_t dim, int32_t hc, DType dtype,
                float* streams, void* stream) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    hc_embed_kernel<T><<<rows, kRowThreads, 0, as_stream(stream)>>>(ids, static_cast<const T*>(table), dim, hc, streams);
    return launch_status("hc_embed");
  });
}

Status hc_pre(const float* mixes, const float* base, const float* scale, const float* streams, int64_t rows,
              int32_t hc, int64_t dim, int32_t sinkhorn_iters, float eps, float* collapsed, float* post,
              float* comb, void* stream, float rms_eps) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  hc_pre_kernel<<<rows, kRowThreads, 0, as_stream(stream)>>>(mixes, base, scale, streams, hc, dim, sinkhorn_iters, eps,
                                                         rms_eps, collapsed, post, comb);
  return launch_status("hc_pre");
}

Status hc_post(const float* out, const float* post, const float* comb, int64_t rows, int32_t hc, int64_t dim,
               float* streams, void* stream) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  int64_t blocks = (rows * dim + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  hc_post_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(out, post, comb, rows, hc, dim, streams);
  return launch_status("hc_post");
}

Status hc_head(const float* mixes, const float* base, const float* scale, const float* streams, int64_t rows,
               int32_t hc, int64_t dim, float eps, float* y, void* stream, float rms_eps) {
  if (rows <= 0) return Status::ok();
  DI_RETURN_IF_ERROR(check_hc(hc));
  hc_head_kernel<<<rows, kRowThreads, 0, as_stream(stream)>>>(mixes, base, scale, streams, hc, dim, eps, rms_eps, y);
  return launch_status("hc_head");
}

}  // namespace di::kernels::cuda
