// mla_attention over a bf16 latent cache (MlaAttentionArgs::bf16_cache, the bf16 models): the
// layout of the tensor-core instance in mla_attention.cu, a block per (row, key range, 16 heads),
// with bf16 operands for mma.sync m16n8k16 (fp32 accumulation). Half the bytes of an fp32 entry
// per key, and half the shared memory per tile, so two blocks share an SM and one block's tile
// math hides the other's loads. Operand fragments come from shared memory by ldmatrix (the
// values transposed); rows are padded to an odd number of 16-byte pieces so its eight row
// addresses fall in distinct banks. Included only by mla_attention.cu.
#pragma once

#include <cuda_bf16.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_attention.h"
#include "kernels/cuda/mla_tile.cuh"

namespace di::kernels::cuda::mla_bf16 {

using mla_tile::cp_async16;
using mla_tile::cp_async_commit;
using mla_tile::cp_async_wait;
using mla_tile::kHeads;
using mla_tile::kTile;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxLatent = 512;
constexpr int kMaxColTiles = kMaxLatent / 8 / kWarps;  // value column tiles per warp
constexpr int kScoreStride = kTile + 4;                // fp32 score rows
constexpr int kProbStride = kTile + 8;                 // bf16 probability rows (80 bytes: odd 16-byte pieces)

__host__ __device__ inline int row_elems(int dim) { return dim + 8; }  // dim a multiple of 16

inline size_t smem_bytes(int dim) {
  const int s = row_elems(dim);
  return static_cast<size_t>(kHeads * s + 2 * kTile * s + kHeads * kProbStride) * 2 +
         static_cast<size_t>(2 * kHeads * kScoreStride + 3 * kHeads) * 4;
}

__global__ void __launch_bounds__(kThreads) attention_kernel(MlaAttentionArgs a, int dim) {
  pdl_sync();
  extern __shared__ uint4 smem_raw[];
  const int S = row_elems(dim);
  auto* qs = reinterpret_cast<__nv_bfloat16*>(smem_raw);  // [kHeads][S]
  __nv_bfloat16* kbuf = qs + kHeads * S;                   // 2 x [kTile][S]
  __nv_bfloat16* ps = kbuf + 2 * kTile * S;                // [kHeads][kProbStride]
  float* ss = reinterpret_cast<float*>(ps + kHeads * kProbStride);  // 2 x [kHeads][kScoreStride]
  float* alpha_s = ss + 2 * kHeads * kScoreStride;
  float* m_s = alpha_s + kHeads;
  float* l_s = m_s + kHeads;
  const int64_t row = blockIdx.x;
  const int split = static_cast<int>(blockIdx.y);
  const int h0 = static_cast<int>(blockIdx.z) * kHeads;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int nh = a.num_heads, L = a.latent_dim, pieces = dim / 8;  // 16-byte pieces per entry
  const int32_t seq = a.batch.seq[row];
  const int64_t num_keys = seq >= 0 ? int64_t{a.batch.pos[row]} + 1 : 0;
  const int64_t k_begin = a.splits == 1 ? 0 : int64_t{split} * a.keys_per_split;
  const int64_t k_end = a.splits == 1 ? num_keys : min(num_keys, k_begin + a.keys_per_split);
  const int num_tiles = k_end > k_begin ? static_cast<int>((k_end - k_begin + kTile - 1) / kTile) : 0;

  {  // The block's heads are contiguous in q: 16-byte loads, four of a thread's in flight before
     // it stores any (a load and store per element, one after another, took most of a decode
     // row's 18 us at one row and 4k keys on an H200).
    const int n4 = kHeads * dim / 4, valid4 = max(0, min(nh - h0, kHeads)) * dim / 4;
    const float4* q4 = reinterpret_cast<const float4*>(a.q + (row * nh + h0) * dim);
    for (int base = tid; base < n4; base += 4 * kThreads) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = base + u * kThreads;
        v[u] = i < valid4 ? q4[i] : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = base + u * kThreads;
        if (i >= n4) break;
        const int e = 4 * i, h = e / dim, c = e - h * dim;
        store_bf16x4(qs + h * S + c, v[u]);
      }
    }
  }
  if (tid < kHeads) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.f;
  }
  CacheView view{};
  if (seq >= 0) view = seq_view(a.batch, seq, a.cache_group);
  // Eight threads a key row: one address computation per row and tile. Rows past the range are
  // zero-filled (their garbage would reach the value sums as 0 * NaN).
  static_assert(kThreads / 8 == kTile, "a tile's rows are the block's thread octets");
  auto issue = [&](int tile) {
    __nv_bfloat16* dst = kbuf + (tile & 1) * kTile * S;
    const int64_t t0 = k_begin + int64_t{tile} * kTile;
    const int k = tid >> 3;
    const bool fill = t0 + k < k_end;
    const auto* src = reinterpret_cast<const uint4*>(cache_entry(view, a.cache_layer, fill ? t0 + k : t0));
    for (int c = tid & 7; c < pieces; c += 8) cp_async16(dst + k * S + 8 * c, src + c, fill);
    cp_async_commit();
  };
  if (num_tiles > 0) issue(0);

  // Scores: warp w takes keys 8 (w & 3) .. + 7 over half (w >> 2) of the 16-channel steps.
  const int key_tile = warp & 3, half = warp >> 2, ksteps = dim / 16;
  const int k_lo = half == 0 ? 0 : ksteps / 2, k_hi = half == 0 ? ksteps / 2 : ksteps;
  // Values: warp w takes latent column tiles w * per_warp ... (w + 1) * per_warp - 1.
  const int col_tiles = L / 8, per_warp = (col_tiles + kWarps - 1) / kWarps;
  // ldmatrix row addresses: A operands (16 rows) take row (lane & 15), column half (lane >> 4).
  const int a_row = lane & 15, a_col = (lane >> 4) * 8;
  float acc[kMaxColTiles][4];
#pragma unroll
  for (int j = 0; j < kMaxColTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    mla_tile::land_tile(tile, num_tiles, issue);
    const __nv_bfloat16* ks = kbuf + (tile & 1) * kTile * S;
    const int64_t t0 = k_begin + int64_t{tile} * kTile;
    const int nk = static_cast<int>(min(int64_t{kTile}, k_end - t0));
    {
      float sc[4] = {0.f, 0.f, 0.f, 0.f};
      // B for two steps at once: keys (lane & 7) of the warp's 8, channel pieces (lane >> 3).
      const __nv_bfloat16* kr = ks + (key_tile * 8 + (lane & 7)) * S + (lane >> 3) * 8;
      int kk = k_lo;
      for (; kk + 1 < k_hi; kk += 2) {
        uint32_t qa[4], qb[4], kb[4];
        ldmatrix_x4(qa, qs + a_row * S + kk * 16 + a_col);
        ldmatrix_x4(qb, qs + a_row * S + (kk + 1) * 16 + a_col);
        ldmatrix_x4(kb, kr + kk * 16);
        mma_m16n8k16_bf16(sc, qa, kb[0], kb[1]);
        mma_m16n8k16_bf16(sc, qb, kb[2], kb[3]);
      }
      if (kk < k_hi) {  // an odd step count: the last one alone (lanes 16..31 address a valid row)
        uint32_t qa[4], kb[4];
        ldmatrix_x4(qa, qs + a_row * S + kk * 16 + a_col);
        ldmatrix_x4(kb, ks + (key_tile * 8 + (lane & 7)) * S + kk * 16 + ((lane >> 3) & 1) * 8);
        mma_m16n8k16_bf16(sc, qa, kb[0], kb[1]);
      }
      float* out = ss + half * kHeads * kScoreStride;
      out[g * kScoreStride + key_tile * 8 + 2 * t] = sc[0];
      out[g * kScoreStride + key_tile * 8 + 2 * t + 1] = sc[1];
      out[(g + 8) * kScoreStride + key_tile * 8 + 2 * t] = sc[2];
      out[(g + 8) * kScoreStride + key_tile * 8 + 2 * t + 1] = sc[3];
    }
    __syncthreads();
    mla_tile::softmax_tile(ss, kScoreStride, nk, a.scale, m_s, l_s, alpha_s, [&](int h, int k, float p) {
      const __nv_bfloat16 pb = __float2bfloat16(p);
      ps[h * kProbStride + k] = pb;
      return __bfloat162float(pb);  // the running sum takes what the value products take
    });
    __syncthreads();
    {
      scale_rows(acc, alpha_s[g], alpha_s[g + 8]);
      uint32_t pa[2][4];
      ldmatrix_x4(pa[0], ps + a_row * kProbStride + a_col);
      ldmatrix_x4(pa[1], ps + a_row * kProbStride + 16 + a_col);
#pragma unroll
      for (int j = 0; j < kMaxColTiles; ++j) {
        const int col = (warp * per_warp + j) * 8;
        if (j >= per_warp || col >= L) break;
        // Keys lane (0..31) at the tile's 8 channels, transposed: B of both 16-key steps.
        uint32_t vb[4];
        ldmatrix_x4_trans(vb, ks + lane * S + col);
        mma_m16n8k16_bf16(acc[j], pa[0], vb[0], vb[1]);
        mma_m16n8k16_bf16(acc[j], pa[1], vb[2], vb[3]);
      }
    }
    __syncthreads();  // this buffer is refilled two tiles on
  }
  __syncthreads();
  mla_tile::store_heads(a, acc, l_s, m_s, row, split, h0, per_warp);
}

}  // namespace di::kernels::cuda::mla_bf16
