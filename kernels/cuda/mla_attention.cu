// mla_attention: see mla_attention.h. A block per (row, key range, group of 16 heads): the heads
// share every key (MQA over the latent cache), so a tile of 32 entries is loaded into shared
// memory once for all of them. In the score pass each warp takes two heads and each lane one key
// of the tile (a full dot product of latent + rope channels); the warp then updates its heads'
// online softmax. In the value pass each head's 16 threads own its latent channels in
// 16-byte pieces. Shared rows are padded to an odd number of 16-byte pieces so the lanes of a
// score pass, each on its own key row, read distinct banks. With several key ranges a second
// kernel merges them.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_attention.h"
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
    const CacheView& view = seq_view(a.batch, seq, a.cache_group);
    for (int i = tid; i < nk * d4; i += kThreads) {
      const int k = i / d4, c = i - k * d4;
      const float4* src = reinterpret_cast<const float4*>(cache_entry(view, a.cache_layer, t0 + k));
      reinterpret_cast<float4*>(ks + k * stride)[c] = src[c];
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

// A block per (row, head): the key ranges' running sums rescaled to the overall max. Empty ranges
// (l = 0) weigh nothing; a padding row has only empty ones and gets zeros.
__global__ void mla_merge_kernel(MlaAttentionArgs a) {
  const int64_t row = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y), nh = a.num_heads, L = a.latent_dim;
  merge_kv_splits(a.partial + (row * nh + h) * (L + 2), int64_t{a.batch.num_tokens} * nh * (L + 2), a.splits, L,
                  -INFINITY, a.out + (row * nh + h) * L);
}

}  // namespace

int32_t mla_attention_splits(int64_t rows, int32_t num_heads, int64_t max_keys) {
  if (rows <= 0 || num_heads <= 0) return 1;
  const int64_t blocks = rows * ((num_heads + kHeads - 1) / kHeads);
  return kv_splits_for(blocks, (max_keys + kTile - 1) / kTile, kMaxSplits);
}

Status mla_attention(const MlaAttentionArgs& a, void* stream) {
  if (a.batch.num_tokens <= 0) return Status::ok();
  if (a.latent_dim <= 0 || a.latent_dim > kMaxLatent || a.latent_dim % 4 || a.rope_dim < 0 || a.rope_dim % 4 ||
      a.num_heads <= 0)
    return Status::invalid_argument(
        "mla_attention: latent_dim must be a multiple of 4 in [4, 512], rope_dim a multiple of 4, num_heads > 0");
  if (a.splits < 1 || a.splits > kMaxSplits || (a.splits > 1 && (!a.partial || a.keys_per_split <= 0)))
    return Status::invalid_argument("mla_attention: splits in [1, 256]; more than 1 needs a partial buffer and "
                                    "keys_per_split > 0");
  const int dim = a.latent_dim + a.rope_dim, stride = row_stride(dim);
  const size_t smem = smem_bytes(stride);
  if (smem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(mla_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(smem));
    if (err != cudaSuccess) return Status::unsupported("mla_attention: entries of " + std::to_string(dim) +
                                                       " floats do not fit shared memory");
  }
  const dim3 grid(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.splits),
                  static_cast<unsigned>((a.num_heads + kHeads - 1) / kHeads));
  mla_attention_kernel<<<grid, kThreads, smem, as_stream(stream)>>>(a, dim, stride);
  DI_RETURN_IF_ERROR(launch_status("mla_attention"));
  if (a.splits == 1) return Status::ok();
  mla_merge_kernel<<<dim3(static_cast<unsigned>(a.batch.num_tokens), static_cast<unsigned>(a.num_heads)), 128, 0,
                     as_stream(stream)>>>(a);
  return launch_status("mla_attention merge");
}

}  // namespace di::kernels::cuda
