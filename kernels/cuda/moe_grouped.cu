// moe_grouped: see moe_grouped.h. Grouping is one block (a counting sort in shared memory).
// Each pass runs a block per (expert, column tile): it loads up to kRows of its expert's input
// rows into shared memory, and each warp streams its columns' weight rows once for them with
// 16-byte loads, so the bytes read are each active expert's weights, once.
#include <algorithm>
#include <type_traits>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/fp8_math.cuh"
#include "kernels/cuda/fp8_mma.cuh"
#include "kernels/cuda/moe_grouped.h"
#include "kernels/cuda/moe_routing.h"

namespace di::kernels::cuda {
namespace {

constexpr int kRows = 4;         // input rows per shared-memory tile
constexpr int kWarps = 8;
constexpr int kColsPerWarp = 4;  // output columns a warp computes per tile
constexpr int kColsPerBlock = kWarps * kColsPerWarp;

__global__ void group_pairs_kernel(const int32_t* ids, int64_t pairs, int32_t experts, int32_t* offsets,
                                   int32_t* slot_pair, int32_t* bad_id) {
  pdl_sync();
  __shared__ int32_t cursor[kMaxGroupedExperts];
  for (int e = threadIdx.x; e < experts; e += blockDim.x) cursor[e] = 0;
  __syncthreads();
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int32_t e = ids[p];
    if (e < 0 || e >= experts) {
      *bad_id = 1;
      continue;
    }
    atomicAdd(&cursor[e], 1);
  }
  __syncthreads();
  if (threadIdx.x < 32) {  // exclusive scan: each lane a contiguous run of experts, then across lanes
    const int lane = threadIdx.x, per = (experts + 31) / 32;
    const int lo = lane * per < experts ? lane * per : experts, hi = lo + per < experts ? lo + per : experts;
    int32_t run = 0, busy = 0;
    for (int e = lo; e < hi; ++e) {
      run += cursor[e];
      busy += cursor[e] > 0;
    }
    int32_t incl = run, busy_incl = busy;
    for (int o = 1; o < 32; o <<= 1) {
      const int32_t v = __shfl_up_sync(0xffffffffu, incl, o), b = __shfl_up_sync(0xffffffffu, busy_incl, o);
      if (lane >= o) {
        incl += v;
        busy_incl += b;
      }
    }
    int32_t at = incl - run, slot = busy_incl - busy;
    int32_t* active = offsets + experts + 1;  // the experts with pairs, ascending, then their count
    for (int e = lo; e < hi; ++e) {
      const int32_t c = cursor[e];
      cursor[e] = at;
      offsets[e] = at;
      if (c > 0) active[slot++] = e;
      at += c;
    }
    if (lane == 31) {
      offsets[experts] = incl;
      active[experts] = busy_incl;
    }
  }
  __syncthreads();
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int32_t e = ids[p];
    if (e < 0 || e >= experts) continue;
    slot_pair[atomicAdd(&cursor[e], 1)] = static_cast<int32_t>(p);
  }
}

// Blocks along y: one per expert that can have pairs (no more than there are pairs), so a decode
// step of few tokens launches no blocks for the hundreds of idle experts.
unsigned busy_blocks(const MoeGroupedArgs& a) {
  return static_cast<unsigned>(a.pairs < a.experts ? a.pairs : a.experts);
}

template <typename W>
__device__ __forceinline__ float rounded(float v) {
  return to_f32(from_f32<W>(v));
}

// Loads VEC weights of row `w` at column k into f.
template <typename W, int VEC>
__device__ __forceinline__ void load_vec(const W* w, int64_t k, float* f) {
  if constexpr (std::is_same_v<W, uint8_t>) {
    static_assert(VEC == 16);
    e4m3x16_to_f32(*reinterpret_cast<const uint4*>(w + k), f);
  } else if constexpr (VEC == 1) {
    f[0] = to_f32(w[k]);
  } else if constexpr (sizeof(W) == 2) {
    static_assert(VEC == 8);
    const uint4 raw = *reinterpret_cast<const uint4*>(w + k);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 t = __bfloat1622float2(h[i]);
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  } else {
    static_assert(VEC == 4);
    const float4 t = *reinterpret_cast<const float4*>(w + k);
    f[0] = t.x;
    f[1] = t.y;
    f[2] = t.z;
    f[3] = t.w;
  }
}

// The fp32 scale of fp8 weight row n at input k of a matrix with `rows` rows and K inputs.
__device__ __forceinline__ float fp8_scale(const float* s, int32_t block_rows, int64_t rows, int64_t K, int64_t n,
                                           int64_t k) {
  return block_rows == 1 ? s[(k >> 7) * rows + n] : s[(n / block_rows) * ((K + 127) >> 7) + (k >> 7)];
}

// kGateUp: columns n of the gate rows and of the up rows (inter + n), SwiGLU'd into act[pair, n];
// else: column n of w2 into y[pair, n]. W uint8_t: fp8 e4m3 weights with their scales.
template <typename W, int VEC, bool kGateUp>
__global__ void grouped_pass_kernel(MoeGroupedArgs a) {
  pdl_sync();
  extern __shared__ float xs[];  // [kRows][K]
  const int32_t* active = a.offsets + a.experts + 1;
  if (static_cast<int32_t>(blockIdx.y) >= active[a.experts]) return;  // fewer experts have pairs
  const int32_t e = active[blockIdx.y];
  const int32_t begin = a.offsets[e], end = a.offsets[e + 1];
  const int64_t K = kGateUp ? a.hidden : a.inter, N = kGateUp ? a.inter : a.hidden;
  const float* in = kGateUp ? a.x : a.act;
  const W* w = static_cast<const W*>(kGateUp ? a.w13[e] : a.w2[e]);
  constexpr bool kFp8 = std::is_same_v<W, uint8_t>;
  const float* wscale = kFp8 ? (kGateUp ? a.w13_scale[e] : a.w2_scale[e]) : nullptr;
  const int64_t wrows = kGateUp ? 2 * a.inter : a.hidden;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float limit = a.swiglu_limit;
  for (int32_t r0 = begin; r0 < end; r0 += kRows) {
    const int nr = end - r0 < kRows ? end - r0 : kRows;
    __syncthreads();  // the previous tile is read by every warp
    for (int64_t idx = threadIdx.x; idx < nr * K; idx += blockDim.x) {
      const int r = static_cast<int>(idx / K);
      const int64_t k = idx - r * K, pair = a.slot_pair[r0 + r];
      const int64_t src = kGateUp ? pair / a.top_k : pair;
      const float v = in[src * K + k];
      if constexpr (kFp8) {
        xs[idx] = a.dtype == DType::kBF16 ? rounded<__nv_bfloat16>(v) : v;
      } else {
        xs[idx] = rounded<W>(v);
      }
    }
    __syncthreads();
    for (int c = 0; c < kColsPerWarp; ++c) {
      const int64_t n = int64_t{blockIdx.x} * kColsPerBlock + warp * kColsPerWarp + c;
      if (n >= N) break;
      float acc[kRows] = {}, acc_up[kRows] = {};
      const W* wg = w + n * K;
      const W* wu = kGateUp ? w + (a.inter + n) * K : nullptr;
#pragma unroll 2
      for (int64_t k0 = int64_t{lane} * VEC; k0 < K; k0 += 32 * VEC) {
        float fg[VEC], fu[VEC];
        load_vec<W, VEC>(wg, k0, fg);
        if constexpr (kGateUp) load_vec<W, VEC>(wu, k0, fu);
        if constexpr (kFp8) {  // a 16-wide chunk lies in one 128-wide scale block
          const int32_t br = kGateUp ? a.fp8_block_rows : a.fp8_w2_block_rows;
          const float sg = fp8_scale(wscale, br, wrows, K, n, k0);
          const float su = kGateUp ? fp8_scale(wscale, br, wrows, K, a.inter + n, k0) : 0.f;
#pragma unroll
          for (int v = 0; v < VEC; ++v) {
            fg[v] *= sg;
            if constexpr (kGateUp) fu[v] *= su;
          }
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (r < nr) {
            const float* xr = xs + r * K + k0;
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
              acc[r] += fg[v] * xr[v];
              if constexpr (kGateUp) acc_up[r] += fu[v] * xr[v];
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r < nr) {
          const float g = warp_sum(acc[r]);
          const int64_t pair = a.slot_pair[r0 + r];
          if constexpr (kGateUp) {
            const float u = warp_sum(acc_up[r]);
            if (lane == 0) {
              const float gc = fminf(g, limit), uc = fminf(fmaxf(u, -limit), limit);
              a.act[pair * a.inter + n] = gc / (1.0f + expf(-gc)) * uc;
            }
          } else if (lane == 0) {
            a.y[pair * a.hidden + n] = g;
          }
        }
      }
    }
  }
}

template <typename W, bool kGateUp>
Status launch_pass(const MoeGroupedArgs& a, void* stream) {
  const int64_t K = kGateUp ? a.hidden : a.inter, N = kGateUp ? a.inter : a.hidden;
  const size_t smem = static_cast<size_t>(kRows * K) * sizeof(float);
  constexpr int kVec = sizeof(W) == 1 ? 16 : sizeof(W) == 2 ? 8 : 4;
  const bool vec = K % kVec == 0;
  if constexpr (sizeof(W) == 1) {
    if (!vec) return Status::unsupported("moe_grouped_mlp: fp8 experts need hidden and inter multiples of 16");
  }
  auto kernel = grouped_pass_kernel<W, kVec, kGateUp>;
  if constexpr (sizeof(W) != 1) {
    if (!vec) kernel = grouped_pass_kernel<W, 1, kGateUp>;
  }
  if (smem > 48 * 1024) {
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess)
      return Status::unsupported("moe_grouped_mlp: rows of " + std::to_string(K) + " inputs do not fit shared memory");
  }
  const dim3 grid(static_cast<unsigned>((N + kColsPerBlock - 1) / kColsPerBlock), busy_blocks(a));
  launch_pdl(kernel, grid, kWarps * 32, smem, as_stream(stream), a);
  return launch_status(kGateUp ? "moe grouped gate_up" : "moe grouped down");
}

// --- bf16 weights on the tensor cores ----------------------------------------------------------
// mma.sync m16n8k16: a warp's 16 output columns (weight rows) against 8 pair rows. Because a dot
// product's terms may be taken in any order, each thread loads 16 consecutive k of its rows with
// two 16-byte loads and feeds them to four mma steps (its logical k pairs (2t, 2t+1) and
// (2t+8, 2t+9) of each step are physical k 16t + 4j .. 16t + 4j + 3 of step j), the same
// permutation for the weights (A) and the inputs (B). A row's 64-wide chunk is then one whole
// 128-byte line per four threads, and a thread has eight weight loads in flight before its first
// mma (at 8 k a thread and four loads a chunk the experts streamed at 65-70% of the read rate,
// every warp waiting on its loads: too few bytes in flight).
constexpr int kMmaWarps = 4;
constexpr int kMmaCols = 16;  // output columns per warp
constexpr int kMmaRows = 8;   // pair rows per tile
constexpr int kMmaChunk = 64;  // k a warp's chunk covers (K must be a multiple)
#ifndef DI_MOE_MMA_DEPTH
#define DI_MOE_MMA_DEPTH 2
#endif
constexpr int kMmaDepth = DI_MOE_MMA_DEPTH;

__device__ __forceinline__ uint4 load_weights(const __nv_bfloat16* p) {
  return __ldcs(reinterpret_cast<const uint4*>(p));  // streamed once: keep L2 for the rest
}

// d += A . B over one 8-wide k group: a = rows g (lo) and g + 8 (hi), b = the input column.
__device__ __forceinline__ void mma_k8(float* d, const uint4& lo, const uint4& hi, const uint4& b) {
  mma_bf16(d, lo.x, hi.x, lo.y, hi.y, b.x, b.y);
  mma_bf16(d, lo.z, hi.z, lo.w, hi.w, b.z, b.w);
}

// The warp's share of a tile: d (and u, for the up rows) += W[n0.., k] . X[row, k] over the
// 64-wide k chunks chunk0, chunk0 + stride, ... (the block's warps split k between them, so a
// column tile has four warps' loads in flight), kDepth chunks' loads issued before their mmas
// (the compiler keeps a loop's loads behind the previous iteration's mma asm).
template <bool kGateUp, int kDepth>
__device__ __forceinline__ void mma_tile(const __nv_bfloat16* g_lo, const __nv_bfloat16* g_hi,
                                         const __nv_bfloat16* u_lo, const __nv_bfloat16* u_hi,
                                         const __nv_bfloat16* x, bool x_valid, int64_t K, int t, int chunk0, int stride,
                                         float* d, float* u) {
  const uint4 zero = make_uint4(0, 0, 0, 0);
  const int64_t step = int64_t{stride} * kMmaChunk;
  for (int64_t k0 = int64_t{chunk0} * kMmaChunk + 16 * t; k0 < K; k0 += kDepth * step) {
    uint4 w[kDepth][8], xv[kDepth][2];  // per chunk: gate lo, hi; up lo, hi (each two 8-wide k groups)
#pragma unroll
    for (int c = 0; c < kDepth; ++c) {
      const int64_t k = k0 + c * step;
      const bool in = c == 0 || k < K;
#pragma unroll
      for (int i = 0; i < 8; ++i) w[c][i] = zero;
      if (in) {
        w[c][0] = load_weights(g_lo + k);
        w[c][1] = load_weights(g_lo + k + 8);
        w[c][2] = load_weights(g_hi + k);
        w[c][3] = load_weights(g_hi + k + 8);
        if constexpr (kGateUp) {
          w[c][4] = load_weights(u_lo + k);
          w[c][5] = load_weights(u_lo + k + 8);
          w[c][6] = load_weights(u_hi + k);
          w[c][7] = load_weights(u_hi + k + 8);
        }
      }
      xv[c][0] = in && x_valid ? *reinterpret_cast<const uint4*>(x + k) : zero;
      xv[c][1] = in && x_valid ? *reinterpret_cast<const uint4*>(x + k + 8) : zero;
    }
#pragma unroll
    for (int c = 0; c < kDepth; ++c) {
      mma_k8(d, w[c][0], w[c][2], xv[c][0]);
      mma_k8(d, w[c][1], w[c][3], xv[c][1]);
      if constexpr (kGateUp) {
        mma_k8(u, w[c][4], w[c][6], xv[c][0]);
        mma_k8(u, w[c][5], w[c][7], xv[c][1]);
      }
    }
  }
}

// xs[slot] = bf16(x[pair / top_k]) for every slot: the gate|up pass's inputs, expert by expert.
// Grid (slots, slices of kGatherCols): a decode step has a handful of pairs, and a block walking a
// whole 4k row one load at a time took 8 us on an H200.
constexpr int kGatherThreads = 256, kGatherCols = 8 * kGatherThreads;

__global__ void gather_pairs_kernel(const float* x, const int32_t* slot_pair, int64_t pairs, int32_t top_k, int64_t K,
                                    __nv_bfloat16* xs) {
  pdl_sync();
  const int64_t lo = int64_t{blockIdx.y} * kGatherCols, hi = lo + kGatherCols < K ? lo + kGatherCols : K;
  for (int64_t slot = blockIdx.x; slot < pairs; slot += gridDim.x) {
    const float* src = x + (slot_pair[slot] / top_k) * K;
#pragma unroll 8
    for (int64_t k = lo + threadIdx.x; k < hi; k += blockDim.x) xs[slot * K + k] = __float2bfloat16(src[k]);
  }
}

// A block per (16-column tile, expert): its warps split k, warp 0 adds their sums and writes.
template <bool kGateUp>
__global__ void mma_pass_kernel(MoeGroupedArgs a, const __nv_bfloat16* in, __nv_bfloat16* act_out) {
  pdl_sync();
  __shared__ float red[kMmaWarps][8][32];
  const int32_t* active = a.offsets + a.experts + 1;
  if (static_cast<int32_t>(blockIdx.y) >= active[a.experts]) return;  // fewer experts have pairs
  const int32_t e = active[blockIdx.y];
  const int32_t begin = a.offsets[e], end = a.offsets[e + 1];
  const int64_t K = kGateUp ? a.hidden : a.inter;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t n0 = int64_t{blockIdx.x} * kMmaCols;
  const auto* w = static_cast<const __nv_bfloat16*>(kGateUp ? a.w13[e] : a.w2[e]);
  const float limit = a.swiglu_limit;
  for (int32_t r0 = begin; r0 < end; r0 += kMmaRows) {
    const int32_t my_slot = r0 + g;  // the pair row this thread feeds as B
    const bool valid = my_slot < end;
    const __nv_bfloat16* x = in + int64_t{valid ? my_slot : begin} * K;
    float d[4] = {0.f, 0.f, 0.f, 0.f}, u[4] = {0.f, 0.f, 0.f, 0.f};
    mma_tile<kGateUp, kMmaDepth>(w + (n0 + g) * K, w + (n0 + g + 8) * K, w + (a.inter + n0 + g) * K,
                      w + (a.inter + n0 + g + 8) * K, x, valid, K, t, warp, kMmaWarps, d, u);
    __syncthreads();  // the previous tile's sums are read
    for (int i = 0; i < 4; ++i) {
      red[warp][i][lane] = d[i];
      red[warp][4 + i][lane] = u[i];
    }
    __syncthreads();
    if (warp != 0) continue;
    for (int q = 1; q < kMmaWarps; ++q)
      for (int i = 0; i < 4; ++i) {
        d[i] += red[q][i][lane];
        u[i] += red[q][4 + i][lane];
      }
    // d[0], d[1]: column n0 + g of rows r0 + 2t, r0 + 2t + 1; d[2], d[3]: column n0 + g + 8.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int32_t slot = r0 + 2 * t + (i & 1);
      if (slot >= end) continue;
      const int64_t n = n0 + g + (i >> 1) * 8;
      if constexpr (kGateUp) {
        const float gc = fminf(d[i], limit), uc = fminf(fmaxf(u[i], -limit), limit);
        act_out[int64_t{slot} * a.inter + n] = __float2bfloat16(gc / (1.0f + expf(-gc)) * uc);
      } else {
        a.y[int64_t{a.slot_pair[slot]} * a.hidden + n] = d[i];
      }
    }
  }
}

// fp8 experts on the tensor cores: mma_pass_kernel's tiles and k split, the codes made bf16 in
// registers (fp8_mma.cuh) 64 k at a time, each chunk's sums scaled by its rows' block scale.
struct ScaleRow {  // one weight row's scales: scale of k = base[(k / 128) * stride]
  const float* base;
  int64_t stride;
};

__device__ __forceinline__ ScaleRow scale_row(const float* s, int32_t block_rows, int64_t rows, int64_t K, int64_t n) {
  if (block_rows == 1) return {s + n, rows};
  return {s + (n / block_rows) * ((K + 127) >> 7), 1};
}

// Twice the bf16 kernel's warps: a chunk's conversions lengthen each warp's iteration, so more
// warps keep the weight loads in flight (measured on an H200 at four warps: 1.6 TB/s).
constexpr int kFp8MmaWarps = 8;

// kWide: 128-wide k chunks, a thread's 32 codes of a row in two 16-byte loads (one scale block
// a chunk), so twice the bytes are in flight per warp; rows of an odd number of 64-wide chunks
// take 64-wide ones.
template <bool kGateUp, bool kWide>
__global__ void __launch_bounds__(kFp8MmaWarps * 32) fp8_mma_pass_kernel(MoeGroupedArgs a, const __nv_bfloat16* in,
                                                                        __nv_bfloat16* act_out) {
  pdl_sync();
  __shared__ float red[kFp8MmaWarps][8][32];
  const int32_t* active = a.offsets + a.experts + 1;
  if (static_cast<int32_t>(blockIdx.y) >= active[a.experts]) return;  // fewer experts have pairs
  const int32_t e = active[blockIdx.y];
  const int32_t begin = a.offsets[e], end = a.offsets[e + 1];
  const int64_t K = kGateUp ? a.hidden : a.inter, wrows = kGateUp ? 2 * a.inter : a.hidden;
  constexpr int kChunk = kWide ? 128 : 64, kPerThread = kChunk / 4;  // k of a row per thread per chunk
  constexpr int kLoads = kPerThread / 16;                             // 16-byte loads of a row per chunk
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t n0 = int64_t{blockIdx.x} * kMmaCols;
  const auto* w = static_cast<const uint8_t*>(kGateUp ? a.w13[e] : a.w2[e]);
  const float* ws = kGateUp ? a.w13_scale[e] : a.w2_scale[e];
  const uint8_t* g_lo = w + (n0 + g) * K + kPerThread * t;
  const uint8_t* u_lo = w + (a.inter + n0 + g) * K + kPerThread * t;
  const int32_t br = kGateUp ? a.fp8_block_rows : a.fp8_w2_block_rows;
  const ScaleRow sg_lo = scale_row(ws, br, wrows, K, n0 + g);
  const ScaleRow sg_hi = scale_row(ws, br, wrows, K, n0 + g + 8);
  const ScaleRow su_lo = scale_row(ws, br, wrows, K, a.inter + n0 + g);
  const ScaleRow su_hi = scale_row(ws, br, wrows, K, a.inter + n0 + g + 8);
  const float limit = a.swiglu_limit;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int32_t r0 = begin; r0 < end; r0 += kMmaRows) {
    const int32_t my_slot = r0 + g;  // the pair row this thread feeds as B
    const bool valid = my_slot < end;
    const __nv_bfloat16* xr = in + int64_t{valid ? my_slot : begin} * K + kPerThread * t;
    float d[4] = {0.f, 0.f, 0.f, 0.f}, u[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 2
    for (int64_t c = warp; c < K / kChunk; c += kFp8MmaWarps) {
      const int64_t k = c * kChunk, kb = k >> 7;
      uint4 lo[kLoads], hi[kLoads], ulo[kLoads], uhi[kLoads], x[2 * kLoads];
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        lo[i] = __ldcs(reinterpret_cast<const uint4*>(g_lo + k + 16 * i));
        hi[i] = __ldcs(reinterpret_cast<const uint4*>(g_lo + 8 * K + k + 16 * i));
        ulo[i] = uhi[i] = zero;
        if constexpr (kGateUp) {
          ulo[i] = __ldcs(reinterpret_cast<const uint4*>(u_lo + k + 16 * i));
          uhi[i] = __ldcs(reinterpret_cast<const uint4*>(u_lo + 8 * K + k + 16 * i));
        }
      }
#pragma unroll
      for (int i = 0; i < 2 * kLoads; ++i) x[i] = valid ? *reinterpret_cast<const uint4*>(xr + k + 8 * i) : zero;
      float p[1][4] = {};
#pragma unroll
      for (int i = 0; i < kLoads; ++i) fp8_mma_chunk<1>(p, lo[i], hi[i], x + 2 * i);
      const float sl = sg_lo.base[kb * sg_lo.stride], sh = sg_hi.base[kb * sg_hi.stride];
      d[0] = fmaf(p[0][0], sl, d[0]);
      d[1] = fmaf(p[0][1], sl, d[1]);
      d[2] = fmaf(p[0][2], sh, d[2]);
      d[3] = fmaf(p[0][3], sh, d[3]);
      if constexpr (kGateUp) {
        float q[1][4] = {};
#pragma unroll
        for (int i = 0; i < kLoads; ++i) fp8_mma_chunk<1>(q, ulo[i], uhi[i], x + 2 * i);
        const float tl = su_lo.base[kb * su_lo.stride], th = su_hi.base[kb * su_hi.stride];
        u[0] = fmaf(q[0][0], tl, u[0]);
        u[1] = fmaf(q[0][1], tl, u[1]);
        u[2] = fmaf(q[0][2], th, u[2]);
        u[3] = fmaf(q[0][3], th, u[3]);
      }
    }
    __syncthreads();  // the previous tile's sums are read
    for (int i = 0; i < 4; ++i) {
      red[warp][i][lane] = d[i];
      red[warp][4 + i][lane] = u[i];
    }
    __syncthreads();
    if (warp != 0) continue;
    for (int q = 1; q < kFp8MmaWarps; ++q)
      for (int i = 0; i < 4; ++i) {
        d[i] += red[q][i][lane];
        u[i] += red[q][4 + i][lane];
      }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int32_t slot = r0 + 2 * t + (i & 1);
      if (slot >= end) continue;
      const int64_t n = n0 + g + (i >> 1) * 8;
      if constexpr (kGateUp) {
        const float gc = fminf(d[i], limit), uc = fminf(fmaxf(u[i], -limit), limit);
        act_out[int64_t{slot} * a.inter + n] = __float2bfloat16(gc / (1.0f + expf(-gc)) * uc);
      } else {
        a.y[int64_t{a.slot_pair[slot]} * a.hidden + n] = d[i];
      }
    }
  }
}

Status mma_mlp(const MoeGroupedArgs& a, void* stream) {
  // Scratch: the gathered bf16 inputs live in y (dead until the down pass writes it), the bf16
  // activations in act.
  auto* xs = reinterpret_cast<__nv_bfloat16*>(a.y);
  auto* act = reinterpret_cast<__nv_bfloat16*>(a.act);
  const dim3 gather(static_cast<unsigned>(a.pairs < 1024 ? a.pairs : 1024),
                    static_cast<unsigned>((a.hidden + kGatherCols - 1) / kGatherCols));
  launch_pdl(gather_pairs_kernel, gather, kGatherThreads, 0, as_stream(stream), a.x, a.slot_pair, a.pairs, a.top_k, a.hidden,
                                                                       xs);
  DI_RETURN_IF_ERROR(launch_status("moe gather pairs"));
  const int64_t per_block = kMmaCols;
  const dim3 g1(static_cast<unsigned>((a.inter + per_block - 1) / per_block), busy_blocks(a));
  const dim3 g2(static_cast<unsigned>((a.hidden + per_block - 1) / per_block), busy_blocks(a));
  if (a.fp8) {
    launch_pdl(a.hidden % 128 == 0 ? fp8_mma_pass_kernel<true, true> : fp8_mma_pass_kernel<true, false>, g1,
               kFp8MmaWarps * 32, 0, as_stream(stream), a, xs, act);
    DI_RETURN_IF_ERROR(launch_status("moe fp8 mma gate_up"));
    launch_pdl(a.inter % 128 == 0 ? fp8_mma_pass_kernel<false, true> : fp8_mma_pass_kernel<false, false>, g2,
               kFp8MmaWarps * 32, 0, as_stream(stream), a, act, nullptr);
    return launch_status("moe fp8 mma down");
  }
  launch_pdl(mma_pass_kernel<true>, g1, kMmaWarps * 32, 0, as_stream(stream), a, xs, act);
  DI_RETURN_IF_ERROR(launch_status("moe mma gate_up"));
  launch_pdl(mma_pass_kernel<false>, g2, kMmaWarps * 32, 0, as_stream(stream), a, act, nullptr);
  return launch_status("moe mma down");
}

// A block per (row, 256 columns), a column a thread; each thread loads its column's pairs before
// adding them, so the loads are in flight together (the sum's order is fixed by the sorted
// pairs). 1024 columns a block were four rounds of loads: 12 us a decode row on an H200.
constexpr int kCombineCols = 256;

__global__ void combine_kernel(const float* __restrict__ y, const float* __restrict__ weights,
                               const int32_t* __restrict__ ids, int32_t top_k, int64_t hidden,
                               float* __restrict__ out) {
  pdl_sync();
  const int64_t r = blockIdx.x;
  int order[kMaxRoutedPerToken];
#pragma unroll
  for (int k = 0; k < kMaxRoutedPerToken; ++k) order[k] = k;
  for (int i = 1; i < top_k; ++i) {  // insertion sort by expert id: stable, so ties keep k order
    const int cur = order[i];
    int j = i - 1;
    while (j >= 0 && ids[r * top_k + order[j]] > ids[r * top_k + cur]) {
      order[j + 1] = order[j];
      --j;
    }
    order[j + 1] = cur;
  }
  const int64_t lo = int64_t{blockIdx.y} * kCombineCols;
  const int64_t hi = lo + kCombineCols < hidden ? lo + kCombineCols : hidden;
  for (int64_t d = lo + threadIdx.x; d < hi; d += blockDim.x) {
    float v[kMaxRoutedPerToken];
#pragma unroll
    for (int i = 0; i < kMaxRoutedPerToken; ++i)
      if (i < top_k) {
        const int64_t p = r * top_k + order[i];
        v[i] = y[p * hidden + d] * weights[p];
      }
    float acc = out[r * hidden + d];
#pragma unroll
    for (int i = 0; i < kMaxRoutedPerToken; ++i)
      if (i < top_k) acc += v[i];
    out[r * hidden + d] = acc;
  }
}

}  // namespace

Status moe_group_pairs(const int32_t* expert_ids, int64_t pairs, int32_t experts, int32_t* offsets, int32_t* slot_pair,
                       int32_t* bad_id, void* stream) {
  if (experts < 1 || experts > kMaxGroupedExperts)
    return Status::invalid_argument("moe_group_pairs: experts " + std::to_string(experts) + " outside [1, " +
                                    std::to_string(kMaxGroupedExperts) + "]");
  launch_pdl(group_pairs_kernel, 1, 1024, 0, as_stream(stream), expert_ids, pairs, experts, offsets, slot_pair, bad_id);
  return launch_status("moe_group_pairs");
}

Status moe_grouped_mlp(const MoeGroupedArgs& a, void* stream) {
  if (a.pairs <= 0) return Status::ok();
  if (a.top_k < 1 || a.hidden <= 0 || a.inter <= 0 || a.experts < 1)
    return Status::invalid_argument("moe_grouped_mlp: top_k, hidden, inter and experts must be > 0");
  if (a.fp8) {
    auto layout_ok = [](int32_t b) { return b == 1 || b == 128; };
    if (!a.w13_scale || !a.w2_scale || !layout_ok(a.fp8_block_rows) || !layout_ok(a.fp8_w2_block_rows))
      return Status::invalid_argument("moe_grouped_mlp: fp8 experts need their scale tables and 1 or 128 block rows");
    // bf16 activations and rows in 64-wide chunks (16-column tiles): the tensor cores.
    if (a.dtype == DType::kBF16 && a.hidden % 64 == 0 && a.inter % 64 == 0 && !a.force_cuda_cores)
      return mma_mlp(a, stream);
    DI_RETURN_IF_ERROR((launch_pass<uint8_t, true>(a, stream)));
    return launch_pass<uint8_t, false>(a, stream);
  }
  // bf16 weights whose rows split into 64-wide chunks (and 16-column tiles): the tensor cores.
  if (a.dtype == DType::kBF16 && a.hidden % kMmaChunk == 0 && a.inter % kMmaChunk == 0 && !a.force_cuda_cores)
    return mma_mlp(a, stream);
  return dispatch_dtype(a.dtype, [&](auto t) -> Status {
    using W = decltype(t);
    DI_RETURN_IF_ERROR((launch_pass<W, true>(a, stream)));
    return launch_pass<W, false>(a, stream);
  });
}

Status moe_combine_pairs(const float* y, const float* weights, const int32_t* expert_ids, int64_t rows, int32_t top_k,
                         int64_t hidden, float* out, void* stream) {
  if (rows <= 0) return Status::ok();
  if (top_k < 1 || top_k > kMaxRoutedPerToken)
    return Status::invalid_argument("moe_combine_pairs: top_k " + std::to_string(top_k) + " outside [1, " +
                                    std::to_string(kMaxRoutedPerToken) + "]");
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>((hidden + kCombineCols - 1) / kCombineCols));
  launch_pdl(combine_kernel, grid, 256, 0, as_stream(stream), y, weights, expert_ids, top_k, hidden, out);
  return launch_status("moe_combine_pairs");
}

}  // namespace di::kernels::cuda
