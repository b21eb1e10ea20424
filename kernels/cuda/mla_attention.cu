// mla_attention: see mla_attention.h. A block per (row, key range, group of 16 heads): the heads
// share every key (MQA over the latent cache), so a tile of 32 entries is loaded into shared
// memory once for all of them. In the score pass each warp takes two heads and each lane one key
// of the tile (a full dot product of latent + rope channels); the warp then updates its heads'
// online softmax. In the value pass each head's 16 threads own its latent channels in
// 16-byte pieces. Shared rows are padded to an odd number of 16-byte pieces so the lanes of a
// score pass, each on its own key row, read distinct banks. With several key ranges a second
// kernel merges them.
//
// The tensor-core instance (args.tensor_cores, the bf16 models) keeps the layout but does its
// products with tf32 mma.sync (m16n8k8, fp32 accumulation): 16 heads are exactly an mma's rows.
// Tiles stream into two shared buffers by cp.async, so the next tile's reads overlap this
// tile's math; one block of 8 warps an SM then keeps the reads near the bandwidth.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_attention.h"
#include "kernels/cuda/mla_attention_bf16.cuh"
#include "kernels/cuda/mla_tile.cuh"
#include "kernels/cuda/split_kv.cuh"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kHeads = 16;  // heads per block: two per warp in the score pass
constexpr int kTile = 32;   // keys per tile: a lane each in the score pass
constexpr int kMaxLatent = 512;
constexpr int kMaxSplits = kMaxKvSplits;
constexpr int kLanesPerHead = kThreads / kHeads;              // value pass
constexpr int kMaxVec = kMaxLatent / (4 * kLanesPerHead);     // float4 pieces per thread
static_assert(kHeads == 2 * (kThreads / 32), "the score pass gives each warp two heads");

int row_stride(int dim) { return (dim / 4) % 2 == 0 ? dim + 4 : dim; }

size_t smem_bytes(int stride) {
  return static_cast<size_t>(kHeads * stride + kTile * stride + kHeads * kTile + 3 * kHeads) * sizeof(float);
}

__device__ __forceinline__ float dot4(float4 a, float4 b, float acc) {
  acc = fmaf(a.x, b.x, acc);
  acc = fmaf(a.y, b.y, acc);
  acc = fmaf(a.z, b.z, acc);
  return fmaf(a.w, b.w, acc);
}

__global__ void __launch_bounds__(kThreads) mla_attention_kernel(MlaAttentionArgs a, int dim, int stride) {
  pdl_sync();
  extern __shared__ float4 smem4[];
  float* qs = reinterpret_cast<float*>(smem4);  // [kHeads][stride]
  float* ks = qs + kHeads * stride;             // [kTile][stride]
  float* ps = ks + kTile * stride;              // [kHeads][kTile]: this tile's probabilities
  float* alpha_s = ps + kHeads * kTile;         // [kHeads]: the rescale of the running sums
  float* m_s = alpha_s + kHeads;
  float* l_s = m_s + kHeads;
  const int64_t row = blockIdx.x;
  const int split = static_cast<int>(blockIdx.y);
  const int h0 = static_cast<int>(blockIdx.z) * kHeads;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int nh = a.num_heads, L = a.latent_dim, d4 = dim / 4;
  const int32_t seq = a.batch.seq[row];
  const int64_t num_keys = seq >= 0 ? int64_t{a.batch.pos[row]} + 1 : 0;
  const int64_t k_begin = a.splits == 1 ? 0 : int64_t{split} * a.keys_per_split;
  const int64_t k_end = a.splits == 1 ? num_keys : min(num_keys, k_begin + a.keys_per_split);

  for (int i = tid; i < kHeads * d4; i += kThreads) {
    const int h = i / d4, c = i - h * d4;
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (h0 + h < nh) v = reinterpret_cast<const float4*>(a.q + (row * nh + h0 + h) * dim)[c];
    reinterpret_cast<float4*>(qs + h * stride)[c] = v;
  }
  const int ha = 2 * warp, hb = ha + 1;  // score pass
  const int ph = tid / kLanesPerHead, sub = tid % kLanesPerHead;  // value pass
  float ma = -INFINITY, mb = -INFINITY, la = 0.f, lb = 0.f;  // warp-uniform
  float4 acc[kMaxVec];
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j) acc[j] = make_float4(0.f, 0.f, 0.f, 0.f);

  for (int64_t t0 = k_begin; t0 < k_end; t0 += kTile) {
    const int nk = static_cast<int>(min(int64_t{kTile}, k_end - t0));
    __syncthreads();  // the previous tile is read (and, the first time, qs is written)
    // Eight threads a key row: one address computation per row, 128 contiguous bytes per load.
    const CacheView& view = seq_view(a.batch, seq, a.cache_group);
    for (int k = tid >> 3; k < nk; k += kThreads >> 3) {
      const float4* src = reinterpret_cast<const float4*>(cache_entry(view, a.cache_layer, t0 + k));
      for (int c = tid & 7; c < d4; c += 8) reinterpret_cast<float4*>(ks + k * stride)[c] = src[c];
    }
    __syncthreads();
    float sa = -INFINITY, sb = -INFINITY;
    if (lane < nk) {
      const float4* kr = reinterpret_cast<const float4*>(ks + lane * stride);
      const float4* qa = reinterpret_cast<const float4*>(qs + ha * stride);
      const float4* qb = reinterpret_cast<const float4*>(qs + hb * stride);
      float da = 0.f, db = 0.f;
      for (int c = 0; c < d4; ++c) {
        const float4 kv = kr[c];
        da = dot4(qa[c], kv, da);
        db = dot4(qb[c], kv, db);
      }
      sa = da * a.scale;
      sb = db * a.scale;
    }
    const float na = fmaxf(ma, warp_max(sa)), nb = fmaxf(mb, warp_max(sb));  // finite: lane 0 has a key
    const float pa = lane < nk ? expf(sa - na) : 0.f, pb = lane < nk ? expf(sb - nb) : 0.f;
    const float aa = expf(ma - na), ab = expf(mb - nb);  // 0 while the running max is -inf
    la = la * aa + warp_sum(pa);
    lb = lb * ab + warp_sum(pb);
    ma = na;
    mb = nb;
    ps[ha * kTile + lane] = pa;
    ps[hb * kTile + lane] = pb;
    if (lane == 0) {
      alpha_s[ha] = aa;
      alpha_s[hb] = ab;
    }
    __syncthreads();
    const float al = alpha_s[ph];
#pragma unroll
    for (int j = 0; j < kMaxVec; ++j) {
      acc[j].x *= al;
      acc[j].y *= al;
      acc[j].z *= al;
      acc[j].w *= al;
    }
    const float* pr = ps + ph * kTile;
    for (int k = 0; k < nk; ++k) {
      const float p = pr[k];
      const float* vr = ks + k * stride;
#pragma unroll
      for (int j = 0; j < kMaxVec; ++j) {
        const int d = 4 * (sub + kLanesPerHead * j);
        if (d < L) {
          const float4 v = *reinterpret_cast<const float4*>(vr + d);
          acc[j].x = fmaf(p, v.x, acc[j].x);
          acc[j].y = fmaf(p, v.y, acc[j].y);
          acc[j].z = fmaf(p, v.z, acc[j].z);
          acc[j].w = fmaf(p, v.w, acc[j].w);
        }
      }
    }
  }
  if (lane == 0) {
    m_s[ha] = ma;
    m_s[hb] = mb;
    l_s[ha] = la;
    l_s[hb] = lb;
  }
  __syncthreads();
  const int h = h0 + ph;
  if (h >= nh) return;
  const float l = l_s[ph];
  if (a.splits == 1) {
    float* o = a.out + (row * nh + h) * L;
#pragma unroll
    for (int j = 0; j < kMaxVec; ++j) {
      const int d = 4 * (sub + kLanesPerHead * j);
      if (d < L) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);  // padding rows (no keys) get zeros
        if (l > 0.f) v = make_float4(acc[j].x / l, acc[j].y / l, acc[j].z / l, acc[j].w / l);
        *reinterpret_cast<float4*>(o + d) = v;
      }
    }
    return;
  }
  float* part = a.partial + ((int64_t{split} * a.batch.num_tokens + row) * nh + h) * (L + 2);
  if (sub == 0) {
    part[0] = m_s[ph];
    part[1] = l;
  }
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j) {
    const int d = 4 * (sub + kLanesPerHead * j);
    if (d < L) {
      part[2 + d] = acc[j].x;
      part[3 + d] = acc[j].y;
      part[4 + d] = acc[j].z;
      part[5 + d] = acc[j].w;
    }
  }
}

// ---- tensor-core instance ----

constexpr int kTcWarps = kThreads / 32;
constexpr int kTcMaxColTiles = kMaxLatent / 8 / kTcWarps;  // 8-channel column tiles per warp
constexpr int kScoreStride = kTile + 4;                     // rows of score / probability tiles

size_t tc_smem_bytes(int stride) {
  return static_cast<size_t>(kHeads * stride + 2 * kTile * stride + 3 * kHeads * kScoreStride + 3 * kHeads) *
         sizeof(float);
}

using mla_tile::cp_async16;
using mla_tile::cp_async_commit;
using mla_tile::cp_async_wait;

__device__ __forceinline__ uint32_t tf32_bits(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// d += a (16x8, row) * b (8x8, col), tf32 in, fp32 accumulation.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__global__ void __launch_bounds__(kThreads) mla_attention_tc_kernel(MlaAttentionArgs a, int dim, int stride) {
  pdl_sync();
  extern __shared__ float4 smem4[];
  float* qs = reinterpret_cast<float*>(smem4);    // [kHeads][stride], tf32-rounded
  float* kbuf = qs + kHeads * stride;             // 2 x [kTile][stride]
  float* ss = kbuf + 2 * kTile * stride;          // 2 x [kHeads][kScoreStride]: the halves of the scores
  float* ps = ss + 2 * kHeads * kScoreStride;     // [kHeads][kScoreStride]: this tile's probabilities
  float* alpha_s = ps + kHeads * kScoreStride;
  float* m_s = alpha_s + kHeads;
  float* l_s = m_s + kHeads;
  const int64_t row = blockIdx.x;
  const int split = static_cast<int>(blockIdx.y);
  const int h0 = static_cast<int>(blockIdx.z) * kHeads;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int nh = a.num_heads, L = a.latent_dim, d4 = dim / 4;
  const int32_t seq = a.batch.seq[row];
  const int64_t num_keys = seq >= 0 ? int64_t{a.batch.pos[row]} + 1 : 0;
  const int64_t k_begin = a.splits == 1 ? 0 : int64_t{split} * a.keys_per_split;
  const int64_t k_end = a.splits == 1 ? num_keys : min(num_keys, k_begin + a.keys_per_split);
  const int num_tiles = k_end > k_begin ? static_cast<int>((k_end - k_begin + kTile - 1) / kTile) : 0;

  for (int i = tid; i < kHeads * dim; i += kThreads) {
    const int h = i / dim, c = i - h * dim;
    const float v = h0 + h < nh ? a.q[(row * nh + h0 + h) * dim + c] : 0.f;
    qs[h * stride + c] = __uint_as_float(tf32_bits(v));
  }
  if (tid < kHeads) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.f;
  }
  CacheView view{};
  if (seq >= 0) view = seq_view(a.batch, seq, a.cache_group);
  // Eight threads a key row (kThreads / 8 == kTile rows): one address computation per row and
  // tile, 128 contiguous bytes per load. Rows past the range are zero-filled.
  static_assert(kThreads / 8 == kTile, "a tile's rows are the block's thread octets");
  auto issue = [&](int tile) {
    float* dst = kbuf + (tile & 1) * kTile * stride;
    const int64_t t0 = k_begin + int64_t{tile} * kTile;
    const int k = tid >> 3;
    const bool fill = t0 + k < k_end;
    const float* src = cache_entry(view, a.cache_layer, fill ? t0 + k : t0);
    for (int c = tid & 7; c < d4; c += 8) cp_async16(dst + k * stride + 4 * c, src + 4 * c, fill);
    cp_async_commit();
  };
  if (num_tiles > 0) issue(0);

  // Scores: warp w takes key column tile (w & 3) over half (w >> 2) of the channels.
  const int key_tile = warp & 3, half = warp >> 2;
  const int ksteps = dim / 8, k_lo = half == 0 ? 0 : ksteps / 2, k_hi = half == 0 ? ksteps / 2 : ksteps;
  // Values: warp w takes latent column tiles w * per_warp ... (w + 1) * per_warp - 1.
  const int col_tiles = L / 8, per_warp = (col_tiles + kTcWarps - 1) / kTcWarps;
  float acc[kTcMaxColTiles][4];
#pragma unroll
  for (int j = 0; j < kTcMaxColTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;

  for (int tile = 0; tile < num_tiles; ++tile) {
    mla_tile::land_tile(tile, num_tiles, issue);
    const float* ks = kbuf + (tile & 1) * kTile * stride;
    const int64_t t0 = k_begin + int64_t{tile} * kTile;
    const int nk = static_cast<int>(min(int64_t{kTile}, k_end - t0));
    {
      float sc[4] = {0.f, 0.f, 0.f, 0.f};
      const float* kr = ks + (key_tile * 8 + g) * stride;
      for (int kk = k_lo; kk < k_hi; ++kk) {
        const int c = kk * 8 + t;
        const uint32_t af[4] = {__float_as_uint(qs[g * stride + c]), __float_as_uint(qs[(g + 8) * stride + c]),
                                __float_as_uint(qs[g * stride + c + 4]),
                                __float_as_uint(qs[(g + 8) * stride + c + 4])};
        const uint32_t bf[2] = {__float_as_uint(kr[c]), __float_as_uint(kr[c + 4])};
        mma_tf32(sc, af, bf);
      }
      float* out = ss + half * kHeads * kScoreStride;
      out[g * kScoreStride + key_tile * 8 + 2 * t] = sc[0];
      out[g * kScoreStride + key_tile * 8 + 2 * t + 1] = sc[1];
      out[(g + 8) * kScoreStride + key_tile * 8 + 2 * t] = sc[2];
      out[(g + 8) * kScoreStride + key_tile * 8 + 2 * t + 1] = sc[3];
    }
    __syncthreads();
    mla_tile::softmax_tile(ss, kScoreStride, nk, a.scale, m_s, l_s, alpha_s, [&](int h, int k, float p) {
      ps[h * kScoreStride + k] = __uint_as_float(tf32_bits(p));
      return p;
    });
    __syncthreads();
    {
      scale_rows(acc, alpha_s[g], alpha_s[g + 8]);
#pragma unroll
      for (int kk = 0; kk < kTile / 8; ++kk) {
        const int k = kk * 8 + t;
        const uint32_t af[4] = {__float_as_uint(ps[g * kScoreStride + k]),
                                __float_as_uint(ps[(g + 8) * kScoreStride + k]),
                                __float_as_uint(ps[g * kScoreStride + k + 4]),
                                __float_as_uint(ps[(g + 8) * kScoreStride + k + 4])};
#pragma unroll
        for (int j = 0; j < kTcMaxColTiles; ++j) {
          const int col = (warp * per_warp + j) * 8 + g;
          if (j >= per_warp || col >= L) break;
          const uint32_t bf[2] = {__float_as_uint(ks[k * stride + col]), __float_as_uint(ks[(k + 4) * stride + col])};
          mma_tf32(acc[j], af, bf);
        }
      }
    }
    __syncthreads();  // this buffer is refilled two tiles on
  }
  __syncthreads();
  mla_tile::store_heads(a, acc, l_s, m_s, row, split, h0, per_warp);
}

// A block per (row, head): the key ranges' running sums rescaled to the overall max. Empty ranges
// (l = 0) weigh nothing; a padding row has only empty ones and gets zeros.
__global__ void mla_merge_kernel(MlaAttentionArgs a) {
  pdl_sync();
  const int64_t row = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y), nh = a.num_heads, L = a.latent_dim;
  const int c0 = static_cast<int>(blockIdx.z) * kMergeChannels;
  merge_kv_splits(a.partial + (row * nh + h) * (L + 2), int64_t{a.batch.num_tokens} * nh * (L + 2), a.splits, L,
                  -INFINITY, a.out + (row * nh + h) * L, c0, min(L, c0 + kMergeChannels));
}

}  // namespace

int32_t mla_attention_splits(int64_t rows, int32_t num_heads, int64_t max_keys, bool tensor_cores, bool bf16_cache) {
  if (rows <= 0 || num_heads <= 0) return 1;
  const int64_t blocks = rows * ((num_heads + kHeads - 1) / kHeads);
  if (bf16_cache) {
    // Two bf16 blocks an SM: two waves' worth of ranges, each of at least four tiles. Ranges of
    // one tile cost more than they save at one row: V2-Lite's 4k context became 128 ranges whose
    // attention and merge took 20 + 19 us a layer on an H200.
    constexpr int64_t kMinTiles = 4;
    const int64_t want = std::max<int64_t>(1, 2 * device_sm_count() / blocks);
    return static_cast<int32_t>(
        std::clamp<int64_t>(std::min(want, (max_keys + kMinTiles * kTile - 1) / (kMinTiles * kTile)), 1, kMaxSplits));
  }
  if (!tensor_cores) return kv_splits_for(blocks, (max_keys + kTile - 1) / kTile, kMaxSplits);
  // One tensor-core block an SM (its two tile buffers take most of the shared memory): one wave
  // of ranges of at least two tiles each.
  const int64_t want = std::max<int64_t>(1, device_sm_count() / blocks);
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(want, (max_keys + 2 * kTile - 1) / (2 * kTile)), 1,
                                                  kMaxSplits));
}

namespace {

Status launch_bf16_cache(const MlaAttentionArgs& a, int dim, void* stream) {
  if (!mla_bf16_cache_fits(a.latent_dim, a.rope_dim))
    return Status::invalid_argument("mla_attention: a bf16 cache needs latent_dim a multiple of 8 and "
                                    "latent_dim + rope_dim a multiple of 16");
  const size_t bytes = mla_bf16::smem_bytes(dim);
  if (cudaFuncSetAttribute(mla_bf16::attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(bytes)) != cudaSuccess)
    return Status::unsupported("mla_attention: bf16 entries of " + std::to_string(dim) +
                               " values do not fit shared memory");
  const dim3 grid(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.splits),
                  static_cast<unsigned>((a.num_heads + kHeads - 1) / kHeads));
  launch_pdl(mla_bf16::attention_kernel, grid, mla_bf16::kThreads, bytes, as_stream(stream), a, dim);
  return launch_status("mla_attention bf16");
}

Status launch_f32_cache(const MlaAttentionArgs& a, int dim, void* stream) {
  const int stride = row_stride(dim);
  if (a.tensor_cores && (a.latent_dim % 8 || dim % 8))
    return Status::invalid_argument("mla_attention: tensor cores need latent_dim and rope_dim multiples of 8");
  const size_t smem = a.tensor_cores ? tc_smem_bytes(stride) : smem_bytes(stride);
  auto* kernel = a.tensor_cores ? mla_attention_tc_kernel : mla_attention_kernel;
  if (smem > 48 * 1024) {
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) return Status::unsupported("mla_attention: entries of " + std::to_string(dim) +
                                                       " floats do not fit shared memory");
  }
  const dim3 grid(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.splits),
                  static_cast<unsigned>((a.num_heads + kHeads - 1) / kHeads));
  launch_pdl(kernel, grid, kThreads, smem, as_stream(stream), a, dim, stride);
  return launch_status("mla_attention");
}

}  // namespace

Status mla_attention(const MlaAttentionArgs& a, void* stream) {
  if (a.batch.num_tokens <= 0) return Status::ok();
  if (a.latent_dim <= 0 || a.latent_dim > kMaxLatent || a.latent_dim % 4 || a.rope_dim < 0 || a.rope_dim % 4 ||
      a.num_heads <= 0)
    return Status::invalid_argument(
        "mla_attention: latent_dim must be a multiple of 4 in [4, 512], rope_dim a multiple of 4, num_heads > 0");
  if (a.splits < 1 || a.splits > kMaxSplits || (a.splits > 1 && (!a.partial || a.keys_per_split <= 0)))
    return Status::invalid_argument("mla_attention: splits in [1, 256]; more than 1 needs a partial buffer and "
                                    "keys_per_split > 0");
  const int dim = a.latent_dim + a.rope_dim;
  DI_RETURN_IF_ERROR(a.bf16_cache ? launch_bf16_cache(a, dim, stream) : launch_f32_cache(a, dim, stream));
  if (a.splits == 1) return Status::ok();
  launch_pdl(mla_merge_kernel, dim3(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.num_heads),
                          static_cast<unsigned>((a.latent_dim + kMergeChannels - 1) / kMergeChannels)), kMergeThreads, 0, as_stream(stream), a);
  return launch_status("mla_attention merge");
}

}  // namespace di::kernels::cuda
