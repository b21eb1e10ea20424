// The indexer's scores on tensor cores (IndexerVarlenArgs::tensor_cores): a block per (row, slice
// of entries), the row's up to 64 heads as the rows of bf16 m16n8k16 mmas (a warp per 16 heads)
// against tiles of 64 entries, fp32 accumulation. Each warp applies relu and the head weights to
// its 16 x 64 products and sums its heads with shuffles; the block adds its four warps' sums.
// Queries and keys are rounded to bf16 (the bf16 models' precision). Included only by
// indexer_topk.cu.
#pragma once

#include <cuda_bf16.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/indexer_topk.h"
#include "kernels/cuda/mma_tile.cuh"

namespace di::kernels::cuda::indexer_mma {

constexpr int kThreads = 128;
constexpr int kHeads = 64;    // most heads a block takes
constexpr int kEntries = 64;  // entries per tile
constexpr int kMaxDim = 256;

// bf16 elements of a query or key row: an odd number of 16-byte pieces (ldmatrix's eight row
// addresses then hit distinct banks).
__host__ __device__ constexpr int row_elems(int dim) { return dim + 8; }

inline size_t smem_bytes(int dim) {
  return static_cast<size_t>(kHeads + kEntries) * row_elems(dim) * 2 + (kHeads + 4 * kEntries) * 4 +
         kEntries * sizeof(void*);
}

__global__ void __launch_bounds__(kThreads) score_kernel(IndexerVarlenArgs a) {
  pdl_sync();
  extern __shared__ uint4 smem_raw[];
  const int D = a.head_dim, S = row_elems(D), d4 = D / 4;
  auto* qs = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [kHeads][S]
  __nv_bfloat16* ks = qs + kHeads * S;                     // [kEntries][S]
  float* ws = reinterpret_cast<float*>(ks + kEntries * S);  // [kHeads] weight * weight_scale * softmax_scale
  float* part = ws + kHeads;                                // [4 warps][kEntries]
  auto** key_ptr = reinterpret_cast<const float**>(part + 4 * kEntries);

  const int64_t i = blockIdx.y;
  const int32_t seq = a.batch.seq[i];
  if (seq < 0) return;
  const int64_t visible = (int64_t{a.batch.pos[i]} + 1) / a.rate;
  if (visible <= a.topk) return;  // the selection takes every entry
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int nh = a.heads;
  for (int x = tid; x < kHeads * d4; x += kThreads) {
    const int h = x / d4, c = (x - h * d4) * 4;
    store_bf16x4(qs + h * S + c, h < nh ? *reinterpret_cast<const float4*>(a.q + (i * nh + h) * D + c)
                                        : make_float4(0.f, 0.f, 0.f, 0.f));
  }
  for (int h = tid; h < kHeads; h += kThreads)
    ws[h] = h < nh ? a.weights[i * nh + h] * a.weight_scale * a.softmax_scale : 0.f;
  const CacheView& keys = seq_view(a.batch, seq, a.key_group);
  const int hm = warp * 16, a_row = lane & 15, a_col = (lane >> 4) * 8;

  for (int64_t e0 = int64_t{blockIdx.x} * kEntries; e0 < visible; e0 += int64_t{gridDim.x} * kEntries) {
    const int ne = static_cast<int>(min(int64_t{kEntries}, visible - e0));
    __syncthreads();  // the last tile's keys and sums are read
    if (tid < kEntries) key_ptr[tid] = tid < ne ? cache_entry(keys, a.key_layer, e0 + tid) : nullptr;
    __syncthreads();
    for (int x = tid; x < kEntries * d4; x += kThreads) {
      const int j = x / d4, c = (x - j * d4) * 4;
      store_bf16x4(ks + j * S + c, key_ptr[j] ? *reinterpret_cast<const float4*>(key_ptr[j] + c)
                                              : make_float4(0.f, 0.f, 0.f, 0.f));
    }
    __syncthreads();
    float acc[kEntries / 8][4] = {};
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t qa[4];
      ldmatrix_x4(qa, qs + (hm + a_row) * S + kk * 16 + a_col);
#pragma unroll
      for (int n = 0; n < kEntries / 8; n += 2) {
        uint32_t kf[4];
        ldmatrix_x4(kf, ks + (n * 8 + (lane & 7) + (lane >> 4) * 8) * S + kk * 16 + ((lane >> 3) & 1) * 8);
        mma_m16n8k16_bf16(acc[n], qa, kf[0], kf[1]);
        mma_m16n8k16_bf16(acc[n + 1], qa, kf[2], kf[3]);
      }
    }
    const float w0 = ws[hm + g], w1 = ws[hm + g + 8];
#pragma unroll
    for (int n = 0; n < kEntries / 8; ++n) {
      float v0 = fmaxf(acc[n][0], 0.f) * w0 + fmaxf(acc[n][2], 0.f) * w1;
      float v1 = fmaxf(acc[n][1], 0.f) * w0 + fmaxf(acc[n][3], 0.f) * w1;
#pragma unroll
      for (int o = 4; o < 32; o <<= 1) {  // over the lanes' row groups g
        v0 += __shfl_xor_sync(0xffffffffu, v0, o);
        v1 += __shfl_xor_sync(0xffffffffu, v1, o);
      }
      if (g == 0) {
        part[warp * kEntries + n * 8 + 2 * t] = v0;
        part[warp * kEntries + n * 8 + 2 * t + 1] = v1;
      }
    }
    __syncthreads();
    if (tid < ne)
      a.scores[i * a.max_visible + e0 + tid] =
          (part[tid] + part[kEntries + tid]) + (part[2 * kEntries + tid] + part[3 * kEntries + tid]);
  }
}

}  // namespace di::kernels::cuda::indexer_mma
