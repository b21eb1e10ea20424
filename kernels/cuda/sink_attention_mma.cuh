// sink_attention_varlen on tensor cores (SinkAttentionVarlenArgs::tensor_cores, one key range): a
// block per (row, 64 heads). The heads share every key (MQA, K = V), so they are the rows of the
// mma and a tile of 32 keys serves all 64 of them from shared memory: Q (64 x head_dim) and the
// tile's keys are held as bf16, S = Q K^T and O += P V run as m16n8k16 bf16 mmas with fp32
// accumulation, the softmax between them in fp32 (probabilities rounded to bf16, and the running
// sum takes the rounded values the products take). Eight warps: for S, warp w takes heads
// 16 (w % 4) .. and keys 16 (w / 4) ..; for O, the same heads and half w / 4 of the channels, so
// a thread keeps 16 x head_dim / 2 accumulators in registers. Keys arrive by cp.async as fp32
// into a staging tile while the previous one is reduced, then become bf16 rows (padded to an odd
// number of 16-byte pieces, so ldmatrix's eight row addresses hit distinct banks). Included only
// by sink_attention_varlen.cu.
#pragma once

#include <cuda_bf16.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mma_tile.cuh"
#include "kernels/cuda/sink_attention_keys.cuh"

namespace di::kernels::cuda::sink_mma {

constexpr int kThreads = 256;
constexpr int kHeads = 64;  // heads per block: the mma rows of four warps
constexpr int kTile = 32;   // keys per tile

// Shared memory of the D-wide instance, byte offsets (each a multiple of 16).
template <int D>
struct Layout {
  static constexpr int kRow = D + 8;        // bf16 elements of a Q or key row
  static constexpr int kProb = kTile + 8;   // bf16 elements of a probability row (80 bytes)
  static constexpr int kScore = kTile + 1;  // fp32 scores of a head
  static constexpr size_t q = 0;
  static constexpr size_t keys = q + size_t{kHeads} * kRow * 2;
  static constexpr size_t probs = keys + size_t{kTile} * kRow * 2;
  static constexpr size_t stage = probs + size_t{kHeads} * kProb * 2;
  static constexpr size_t scores = stage + size_t{kTile} * D * 4;
  static constexpr size_t stats = scores + size_t{kHeads} * kScore * 4;  // alpha, m, l per head
  static constexpr size_t bytes = stats + 3 * size_t{kHeads} * 4;
};

template <int D>
__global__ void __launch_bounds__(kThreads, 1) attention_kernel(SinkAttentionVarlenArgs a) {
  pdl_sync();
  using L = Layout<D>;
  constexpr int kRow = L::kRow, kProb = L::kProb, kScore = L::kScore, kPieces = D / 4;
  constexpr int kColTiles = D / 16;  // 8-channel value tiles per warp (half the channels)
  extern __shared__ uint4 smem_raw[];
  char* smem = reinterpret_cast<char*>(smem_raw);
  auto* qs = reinterpret_cast<__nv_bfloat16*>(smem + L::q);
  auto* ks = reinterpret_cast<__nv_bfloat16*>(smem + L::keys);
  auto* ps = reinterpret_cast<__nv_bfloat16*>(smem + L::probs);
  auto* stage = reinterpret_cast<float*>(smem + L::stage);
  auto* ss = reinterpret_cast<float*>(smem + L::scores);
  float* alpha_s = reinterpret_cast<float*>(smem + L::stats);
  float* m_s = alpha_s + kHeads;
  float* l_s = m_s + kHeads;
  __shared__ const float* key_ptr[2][kTile];

  const int64_t row = blockIdx.x;
  const int h0 = static_cast<int>(blockIdx.y) * kHeads;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int nh = a.num_heads;
  const SinkRowKeys k = sink_row_keys(a, row);
  if (k.seq < 0) {  // padding: zeros
    for (int i = tid; i < kHeads * D; i += kThreads)
      if (h0 + i / D < nh) a.out[(row * nh + h0) * D + i] = 0.f;
    return;
  }
  const int64_t nkeys = k.num_keys;  // at least the row's own key
  const int num_tiles = static_cast<int>((nkeys + kTile - 1) / kTile);

  auto pointers = [&](int tile) {
    const int64_t j = int64_t{tile} * kTile + tid;
    if (tid < kTile) key_ptr[tile & 1][tid] = j < nkeys ? sink_key_row(a, k, row, j) : nullptr;
  };
  // Rows past the keys are zero-filled from the tile's first key (a valid address).
  auto issue = [&](int tile) {
    const float* const* ptr = key_ptr[tile & 1];
    for (int i = tid; i < kTile * kPieces; i += kThreads) {
      const int j = i / kPieces, c = (i - j * kPieces) * 4;
      const float* src = ptr[j] ? ptr[j] : ptr[0];
      cp_async16(stage + j * D + c, src + c, ptr[j] != nullptr);
    }
    cp_async_commit();
  };

  pointers(0);
  for (int i = tid; i < kHeads * kPieces; i += kThreads) {
    const int h = i / kPieces, c = (i - h * kPieces) * 4;
    const float4 v = h0 + h < nh ? *reinterpret_cast<const float4*>(a.q + (row * nh + h0 + h) * D + c)
                                 : make_float4(0.f, 0.f, 0.f, 0.f);
    store_bf16x4(qs + h * kRow + c, v);
  }
  if (tid < kHeads) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.f;
  }
  __syncthreads();
  issue(0);
  if (num_tiles > 1) pointers(1);

  const int hm = (warp & 3) * 16;                // the warp's heads (mma rows)
  const int kb = (warp >> 2) * 16;               // its keys of a tile, for S
  const int cb = (warp >> 2) * (D / 2);          // its channels, for O
  const int a_row = lane & 15, a_col = (lane >> 4) * 8;  // ldmatrix addresses of A operands
  float acc[kColTiles][4];
#pragma unroll
  for (int j = 0; j < kColTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    cp_async_wait<0>();
    __syncthreads();  // the staged tile is complete, and every warp is done with the last one
    for (int i = tid; i < kTile * kPieces; i += kThreads) {
      const int j = i / kPieces, c = (i - j * kPieces) * 4;
      store_bf16x4(ks + j * kRow + c, *reinterpret_cast<const float4*>(stage + j * D + c));
    }
    __syncthreads();
    if (tile + 1 < num_tiles) issue(tile + 1);  // lands while this tile is reduced
    if (tile + 2 < num_tiles) pointers(tile + 2);
    const int nk = static_cast<int>(min(int64_t{kTile}, nkeys - int64_t{tile} * kTile));

    {  // S = Q K^T for 16 heads x 16 keys
      float sc[2][4] = {};
      const __nv_bfloat16* kr = ks + (kb + (lane & 7) + (lane >> 4) * 8) * kRow + ((lane >> 3) & 1) * 8;
#pragma unroll 2
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t qa[4], kf[4];
        ldmatrix_x4(qa, qs + (hm + a_row) * kRow + kk * 16 + a_col);
        ldmatrix_x4(kf, kr + kk * 16);
        mma_m16n8k16_bf16(sc[0], qa, kf[0], kf[1]);
        mma_m16n8k16_bf16(sc[1], qa, kf[2], kf[3]);
      }
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const int key = kb + n * 8 + 2 * t;
        ss[(hm + g) * kScore + key] = sc[n][0] * a.scale;
        ss[(hm + g) * kScore + key + 1] = sc[n][1] * a.scale;
        ss[(hm + g + 8) * kScore + key] = sc[n][2] * a.scale;
        ss[(hm + g + 8) * kScore + key + 1] = sc[n][3] * a.scale;
      }
    }
    __syncthreads();
    {  // online softmax: four threads a head, eight keys each
      const int h = tid >> 2, k0 = (tid & 3) * 8;
      float s[8], tmax = -INFINITY;
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        s[u] = k0 + u < nk ? ss[h * kScore + k0 + u] : -INFINITY;
        tmax = fmaxf(tmax, s[u]);
      }
      tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
      tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
      const float m_old = m_s[h], m_new = fmaxf(m_old, tmax);  // finite: key 0 of a tile exists
      float sum = 0.f;
      __nv_bfloat162 pb[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float p0 = k0 + 2 * u < nk ? expf(s[2 * u] - m_new) : 0.f;
        const float p1 = k0 + 2 * u + 1 < nk ? expf(s[2 * u + 1] - m_new) : 0.f;
        pb[u] = __floats2bfloat162_rn(p0, p1);
        sum += __low2float(pb[u]) + __high2float(pb[u]);
      }
      *reinterpret_cast<uint4*>(ps + h * kProb + k0) = *reinterpret_cast<const uint4*>(pb);
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      __syncwarp();
      if ((tid & 3) == 0) update_softmax_stats(m_s, l_s, alpha_s, h, m_old, m_new, sum);
    }
    __syncthreads();
    {  // O = alpha O + P V for 16 heads x half the channels
      scale_rows(acc, alpha_s[hm + g], alpha_s[hm + g + 8]);
      uint32_t pa[2][4];
      ldmatrix_x4(pa[0], ps + (hm + a_row) * kProb + a_col);
      ldmatrix_x4(pa[1], ps + (hm + a_row) * kProb + 16 + a_col);
#pragma unroll
      for (int j = 0; j < kColTiles; ++j) {
        // Keys lane (0..31) at the tile's 8 channels, transposed: B of both 16-key steps.
        uint32_t vb[4];
        ldmatrix_x4_trans(vb, ks + lane * kRow + cb + j * 8);
        mma_m16n8k16_bf16(acc[j], pa[0], vb[0], vb[1]);
        mma_m16n8k16_bf16(acc[j], pa[1], vb[2], vb[3]);
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int hl = hm + g + 8 * half, h = h0 + hl;
    if (h >= nh) continue;
    const float sink = a.sinks ? a.sinks[h] : -INFINITY;
    const float inv = 1.f / (l_s[hl] + expf(sink - m_s[hl]));
    float* o = a.out + (row * nh + h) * D + cb + 2 * t;
#pragma unroll
    for (int j = 0; j < kColTiles; ++j)
      *reinterpret_cast<float2*>(o + j * 8) = make_float2(acc[j][2 * half] * inv, acc[j][2 * half + 1] * inv);
  }
}

}  // namespace di::kernels::cuda::sink_mma
