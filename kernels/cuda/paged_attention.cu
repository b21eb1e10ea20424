// Kernels of paged_attention.h. One block per (tile, kv head): the tile's tokens times the
// query heads sharing that kv head are the block's rows, so each K/V tile read from the cache
// serves all of them. Keys stream through shared memory 32 at a time with an online softmax
// (running max and sum per row); all math in fp32.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/paged_attention.h"

namespace di::kernels::cuda {
namespace {

constexpr int kKeysPerTile = 32;
constexpr int kMaxRows = 64;
constexpr int kThreads = 256;

template <typename T>
__global__ void write_kv_kernel(const T* k, const T* v, int64_t kv_stride, const int32_t* row_seq,
                                const int64_t* positions, const CacheView* seqs, int32_t layer, int64_t width) {
  const int64_t r = blockIdx.x;
  const CacheView d = seqs[row_seq[r]];
  T* e = cache_entry<T>(d, layer, positions[r]);
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    e[i] = k[r * kv_stride + i];
    e[width + i] = v[r * kv_stride + i];
  }
}

struct SmemLayout {
  int rows_max, hd;
  __host__ __device__ int q() const { return 0; }
  __host__ __device__ int acc() const { return rows_max * hd; }
  __host__ __device__ int k() const { return 2 * rows_max * hd; }
  __host__ __device__ int v() const { return k() + kKeysPerTile * (hd + 1); }
  __host__ __device__ int s() const { return v() + kKeysPerTile * hd; }
  __host__ __device__ int m() const { return s() + rows_max * kKeysPerTile; }
  __host__ __device__ int l() const { return m() + rows_max; }
  __host__ __device__ int alpha() const { return l() + rows_max; }
  __host__ __device__ int floats() const { return alpha() + rows_max; }
};

template <typename T>
__global__ void __launch_bounds__(kThreads) paged_attention_kernel(const T* q, int64_t q_stride, T* out,
                                                                   const AttentionTile* tiles,
                                                                   const CacheView* seqs, int32_t layer,
                                                                   AttentionShape shape, int rows_max) {
  extern __shared__ float smem[];
  __shared__ const uint8_t* key_entry[kKeysPerTile];
  const AttentionTile tile = tiles[blockIdx.x];
  const int kvh = blockIdx.y;
  const CacheView d = seqs[tile.seq];
  const int hd = shape.head_dim;
  const int group = shape.num_heads / shape.num_kv_heads;
  const int rows = tile.num_rows * group;
  const SmemLayout L{rows_max, hd};
  float *q_s = smem + L.q(), *acc = smem + L.acc(), *k_s = smem + L.k(), *v_s = smem + L.v();
  float *s_s = smem + L.s(), *m_s = smem + L.m(), *l_s = smem + L.l(), *alpha_s = smem + L.alpha();
  const int64_t width = int64_t{shape.num_kv_heads} * hd;  // elements of K (or V) in an entry
  constexpr int kVec = 16 / sizeof(T);

  // Row r is token r / group of the tile and query head kvh * group + r % group.
  for (int e = threadIdx.x; e < rows * hd; e += blockDim.x) {
    const int r = e / hd, c = e % hd;
    const int64_t row = tile.row0 + r / group;
    const int h = kvh * group + r % group;
    q_s[e] = to_f32(q[row * q_stride + int64_t{h} * hd + c]) * shape.scale;
    acc[e] = 0.f;
  }
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    m_s[r] = -INFINITY;
    l_s[r] = 0.f;
  }
  const int64_t last_pos = int64_t{tile.pos0} + tile.num_rows - 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, num_warps = blockDim.x >> 5;

  for (int64_t k0 = 0; k0 <= last_pos; k0 += kKeysPerTile) {
    const int64_t left = last_pos + 1 - k0;
    const int nk = left < kKeysPerTile ? static_cast<int>(left) : kKeysPerTile;
    __syncthreads();  // the previous tile's K/V and scores are no longer read
    if (threadIdx.x < nk) key_entry[threadIdx.x] = cache_entry<const uint8_t>(d, layer, k0 + threadIdx.x);
    __syncthreads();
    // 16-byte loads, all issued before any use: the loop is latency-bound otherwise.
    if (hd % kVec == 0) {
      const int vecs = hd / kVec;
      for (int e = threadIdx.x; e < nk * vecs; e += blockDim.x) {
        const int j = e / vecs, c = (e % vecs) * kVec;
        const T* ent = reinterpret_cast<const T*>(key_entry[j]);
        const uint4 kraw = *reinterpret_cast<const uint4*>(ent + int64_t{kvh} * hd + c);
        const uint4 vraw = *reinterpret_cast<const uint4*>(ent + width + int64_t{kvh} * hd + c);
        const T* kt = reinterpret_cast<const T*>(&kraw);
        const T* vt = reinterpret_cast<const T*>(&vraw);
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          k_s[j * (hd + 1) + c + i] = to_f32(kt[i]);
          v_s[j * hd + c + i] = to_f32(vt[i]);
        }
      }
    } else {
      for (int e = threadIdx.x; e < nk * hd; e += blockDim.x) {
        const int j = e / hd, c = e % hd;
        const T* ent = reinterpret_cast<const T*>(key_entry[j]);
        k_s[j * (hd + 1) + c] = to_f32(ent[int64_t{kvh} * hd + c]);
        v_s[j * hd + c] = to_f32(ent[width + int64_t{kvh} * hd + c]);
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < rows * kKeysPerTile; e += blockDim.x) {
      const int r = e / kKeysPerTile, j = e % kKeysPerTile;
      const int64_t pos = tile.pos0 + r / group;
      float sc = -INFINITY;
      if (j < nk && k0 + j <= pos) {
        const float* qr = q_s + r * hd;
        const float* kr = k_s + j * (hd + 1);
        float dot = 0.f;
        for (int c = 0; c < hd; ++c) dot = fmaf(qr[c], kr[c], dot);
        sc = dot;
      }
      s_s[e] = sc;
    }
    __syncthreads();
    for (int r = warp; r < rows; r += num_warps) {
      const float sv = s_s[r * kKeysPerTile + lane];
      const float m_old = m_s[r];
      const float m_new = fmaxf(m_old, warp_max(sv));
      const float p = sv == -INFINITY ? 0.f : __expf(sv - m_new);
      const float sum = warp_sum(p);
      s_s[r * kKeysPerTile + lane] = p;
      if (lane == 0) {
        const float alpha = m_old == -INFINITY ? 0.f : __expf(m_old - m_new);
        alpha_s[r] = alpha;
        l_s[r] = l_s[r] * alpha + sum;
        m_s[r] = m_new;
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < rows * hd; e += blockDim.x) {
      const int r = e / hd, c = e % hd;
      const float* pr = s_s + r * kKeysPerTile;
      float a = acc[e] * alpha_s[r];
      for (int j = 0; j < nk; ++j) a = fmaf(pr[j], v_s[j * hd + c], a);
      acc[e] = a;
    }
  }
  __syncthreads();
  const int64_t out_stride = int64_t{shape.num_heads} * hd;
  for (int e = threadIdx.x; e < rows * hd; e += blockDim.x) {
    const int r = e / hd, c = e % hd;
    const int64_t row = tile.row0 + r / group;
    const int h = kvh * group + r % group;
    out[row * out_stride + int64_t{h} * hd + c] = from_f32<T>(acc[e] / l_s[r]);
  }
}

Status check_shape(const AttentionShape& s) {
  if (s.num_heads <= 0 || s.num_kv_heads <= 0 || s.num_heads % s.num_kv_heads || s.head_dim <= 0)
    return Status::invalid_argument("paged attention: num_heads must be a positive multiple of num_kv_heads");
  return Status::ok();
}

}  // namespace

int32_t attention_tile_tokens(const AttentionShape& shape) {
  const int32_t group = shape.num_heads / std::max(1, shape.num_kv_heads);
  // 64 rows at head_dim 128; fewer for wider heads so shared memory stays under the limit.
  const int32_t max_rows = std::max(1, kMaxRows * 128 / std::max(128, shape.head_dim));
  return std::max(1, max_rows / std::max(1, group));
}

void append_attention_tiles(const AttentionShape& shape, int32_t seq, int32_t row0, int32_t pos0, int32_t num_tokens,
                            std::vector<AttentionTile>& tiles) {
  const int32_t per = attention_tile_tokens(shape);
  for (int32_t t = 0; t < num_tokens; t += per) tiles.push_back({seq, row0 + t, std::min(per, num_tokens - t), pos0 + t});
}

Status write_paged_kv(const void* k, const void* v, int64_t kv_stride, int64_t rows, const int32_t* row_seq,
                      const int64_t* positions, const CacheView* seqs, int32_t layer, const AttentionShape& shape,
                      DType dtype, void* stream) {
  DI_RETURN_IF_ERROR(check_shape(shape));
  if (rows <= 0) return Status::ok();
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    write_kv_kernel<T><<<rows, 128, 0, as_stream(stream)>>>(static_cast<const T*>(k), static_cast<const T*>(v),
                                                            kv_stride, row_seq, positions, seqs, layer,
                                                            int64_t{shape.num_kv_heads} * shape.head_dim);
    return launch_status("write_paged_kv");
  });
}

Status paged_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                       const CacheView* seqs, int32_t layer, const AttentionShape& shape, DType dtype, void* stream) {
  DI_RETURN_IF_ERROR(check_shape(shape));
  if (num_tiles <= 0) return Status::ok();
  const int group = shape.num_heads / shape.num_kv_heads;
  const int rows_max = attention_tile_tokens(shape) * group;
  const size_t smem = static_cast<size_t>(SmemLayout{rows_max, shape.head_dim}.floats()) * sizeof(float);
  if (smem > 200 * 1024)
    return Status::unsupported("paged attention: head_dim " + std::to_string(shape.head_dim) + " with " +
                               std::to_string(group) + " query heads per kv head needs " + std::to_string(smem) +
                               " bytes of shared memory");
  return dispatch_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    auto kernel = paged_attention_kernel<T>;
    DI_RETURN_IF_ERROR(cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
        "paged_attention smem"));
    const dim3 grid(static_cast<unsigned>(num_tiles), static_cast<unsigned>(shape.num_kv_heads));
    kernel<<<grid, kThreads, smem, as_stream(stream)>>>(static_cast<const T*>(q), q_stride, static_cast<T*>(out),
                                                        tiles, seqs, layer, shape, rows_max);
    return launch_status("paged_attention");
  });
}

}  // namespace di::kernels::cuda
