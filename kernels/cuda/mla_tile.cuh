// What mla_attention's two tensor-core kernels (tf32 over an fp32 cache, bf16 over a bf16 one)
// share: the asynchronous tile copy, the online softmax of one 32-key tile for 16 heads, and the
// store of a block's 16 heads (normalised, or as a key range's partial for the merge). Both keep
// the same shared-memory stats (m, l, alpha per head), score halves and accumulator layout: the
// mma's rows g and g + 8 are heads h0 + g and h0 + g + 8, its columns 2t and 2t + 1 channels.
// Included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/mla_attention.h"
#include "kernels/cuda/mma_tile.cuh"

namespace di::kernels::cuda::mla_tile {

constexpr int kHeads = 16;  // an mma's rows
constexpr int kTile = 32;   // keys per tile

using ::di::kernels::cuda::cp_async16;
using ::di::kernels::cuda::cp_async_commit;
using ::di::kernels::cuda::cp_async_wait;

// Waits for `tile` to land in shared memory while the next one (if any) starts copying:
// issue(i) copies tile i into its buffer and commits the group. Every thread then sees the tile
// (and, the first time, whatever was written before the loop).
template <typename Issue>
__device__ __forceinline__ void land_tile(int tile, int num_tiles, Issue issue) {
  if (tile + 1 < num_tiles) {
    issue(tile + 1);
    cp_async_wait<1>();
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
}

// Online softmax over one tile, 16 threads a head and two keys each (a block of 256 threads):
// scores are the sum of the two channel halves in ss ([2][kHeads][score_stride]), keys past nk
// weigh nothing. store_p(h, k, p) keeps p for the value products and returns the value it kept
// (rounded to the operand type), which the running sum then takes. Updates m, l and alpha.
template <typename StoreP>
__device__ __forceinline__ void softmax_tile(const float* ss, int score_stride, int nk, float scale, float* m_s,
                                             float* l_s, float* alpha_s, StoreP store_p) {
  const int tid = threadIdx.x, h = tid >> 4, k0 = 2 * (tid & 15);
  float s[2];
  float tmax = -INFINITY;
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const int k = k0 + u;
    s[u] = k < nk ? (ss[h * score_stride + k] + ss[(kHeads + h) * score_stride + k]) * scale : -INFINITY;
    tmax = fmaxf(tmax, s[u]);
  }
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, o));
  const float m_old = m_s[h], m_new = fmaxf(m_old, tmax);  // finite: key 0 of a tile exists
  float sum = 0.f;
#pragma unroll
  for (int u = 0; u < 2; ++u) sum += store_p(h, k0 + u, k0 + u < nk ? expf(s[u] - m_new) : 0.f);
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  __syncwarp();
  if ((tid & 15) == 0) update_softmax_stats(m_s, l_s, alpha_s, h, m_old, m_new, sum);
}

// The block's 16 heads from the accumulators of this warp's column tiles warp * per_warp ...:
// out / l with one key range, else [m, l, sums] into the range's partial. Padding rows (no keys,
// l = 0) get zeros.
template <int kCols>
__device__ __forceinline__ void store_heads(const MlaAttentionArgs& a, const float (&acc)[kCols][4], const float* l_s,
                                            const float* m_s, int64_t row, int split, int h0, int per_warp) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int nh = a.num_heads, L = a.latent_dim;
#pragma unroll
  for (int half_row = 0; half_row < 2; ++half_row) {
    const int hl = g + 8 * half_row, h = h0 + hl;
    if (h >= nh) continue;
    const float l = l_s[hl], m = m_s[hl];
    float* part = a.splits == 1 ? nullptr
                                : a.partial + ((int64_t{split} * a.batch.num_tokens + row) * nh + h) * (L + 2);
    float* o = a.out + (row * nh + h) * L;
    if (part && warp == 0 && t == 0) {
      part[0] = m;
      part[1] = l;
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      const int col = (warp * per_warp + j) * 8 + 2 * t;
      if (j >= per_warp || col >= L) break;
      const float v0 = acc[j][2 * half_row], v1 = acc[j][2 * half_row + 1];
      if (part) {
        part[2 + col] = v0;
        part[3 + col] = v1;
      } else {
        o[col] = l > 0.f ? v0 / l : 0.f;
        o[col + 1] = l > 0.f ? v1 / l : 0.f;
      }
    }
  }
}

}  // namespace di::kernels::cuda::mla_tile
