// Kernels of decode_attention.h. Block (row, kv head, split) of 4 warps: warp w takes keys
// w, w+4, ... of the chunk; lane l holds channels [l*E, l*E+E) of q (for every query head of
// the group), K and V, so a key's scores need one warp reduction per head and V is applied
// without shared memory. The warps' partial softmaxes merge in shared memory, the splits'
// in the second kernel.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/decode_attention.h"

namespace di::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;

__device__ __forceinline__ const uint8_t* entry_at(const PagedSeqDesc& d, const int32_t* tables, int32_t layer,
                                                   int64_t pos) {
  const int32_t block = tables[d.table_start + pos / d.block_size];
  return reinterpret_cast<const uint8_t*>(d.base) + layer * d.layer_stride + block * d.block_stride +
         (pos % d.block_size) * d.entry_bytes;
}

template <int Bytes>
struct alignas(Bytes) RawVec {
  uint8_t b[Bytes];
};

// E consecutive elements as one load when E * sizeof(T) is 4, 8 or 16 bytes (the lane's slice
// of a row is then aligned to its size), else element by element.
template <typename T, int E>
__device__ __forceinline__ void load_elems(const T* p, float (&out)[E]) {
  constexpr int kBytes = E * static_cast<int>(sizeof(T));
  if constexpr (kBytes == 4 || kBytes == 8 || kBytes == 16) {
    const RawVec<kBytes> raw = *reinterpret_cast<const RawVec<kBytes>*>(p);
    const T* t = reinterpret_cast<const T*>(raw.b);
#pragma unroll
    for (int i = 0; i < E; ++i) out[i] = to_f32(t[i]);
  } else {
#pragma unroll
    for (int i = 0; i < E; ++i) out[i] = to_f32(p[i]);
  }
}

template <typename T, int E>
__global__ void __launch_bounds__(kWarps * 32) decode_split_kernel(const T* q, int64_t q_stride,
                                                                    const AttentionTile* tiles,
                                                                    const PagedSeqDesc* seqs, const int32_t* tables,
                                                                    int32_t layer, AttentionShape shape, int64_t chunk,
                                                                    float* ws) {
  const AttentionTile tile = tiles[blockIdx.x];
  const int kvh = blockIdx.y, z = blockIdx.z, splits = gridDim.z;
  const int group = shape.num_heads / shape.num_kv_heads;
  const int hd = shape.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const PagedSeqDesc d = seqs[tile.seq];
  const int64_t width = int64_t{shape.num_kv_heads} * hd;
  const int64_t begin = z * chunk;
  const int64_t end = min(begin + chunk, int64_t{tile.pos0} + 1);
  // Head dims below 32 (E = 1): lanes past the head hold zeros, adding nothing to the scores.
  const bool active = lane * E < hd;

  float qr[kMaxGroup][E], acc[kMaxGroup][E], m[kMaxGroup], l[kMaxGroup];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < E; ++i) acc[g][i] = 0.f;
#pragma unroll
    for (int i = 0; i < E; ++i) qr[g][i] = 0.f;
    if (g < group && active) {
      load_elems<T, E>(q + int64_t{tile.row0} * q_stride + int64_t{kvh * group + g} * hd + lane * E, qr[g]);
#pragma unroll
      for (int i = 0; i < E; ++i) qr[g][i] *= shape.scale;
    }
  }
  // Two keys per warp per iteration, both loaded before the math, so their loads overlap.
  for (int64_t k0 = begin + warp; k0 < end; k0 += 2 * kWarps) {
    float kv[2][E], vv[2][E];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int64_t k = k0 + u * kWarps;
#pragma unroll
      for (int i = 0; i < E; ++i) kv[u][i] = vv[u][i] = 0.f;
      if (k < end && active) {
        const T* ent = reinterpret_cast<const T*>(entry_at(d, tables, layer, k));
        load_elems<T, E>(ent + int64_t{kvh} * hd + lane * E, kv[u]);
        load_elems<T, E>(ent + width + int64_t{kvh} * hd + lane * E, vv[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (k0 + u * kWarps >= end) break;
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g >= group) break;
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < E; ++i) s = fmaf(qr[g][i], kv[u][i], s);
        s = warp_sum(s);
        const float m_new = fmaxf(m[g], s);
        const float alpha = __expf(m[g] - m_new);  // m = -inf at first: exp(-inf) = 0
        const float p = __expf(s - m_new);
        l[g] = l[g] * alpha + p;
#pragma unroll
        for (int i = 0; i < E; ++i) acc[g][i] = fmaf(acc[g][i], alpha, p * vv[u][i]);
        m[g] = m_new;
      }
    }
  }
  // Merge the warps: shared [warp][g] stats and [warp][g][hd] outputs.
  extern __shared__ float sm[];
  float* sm_m = sm;
  float* sm_l = sm + kWarps * kMaxGroup;
  float* sm_o = sm + 2 * kWarps * kMaxGroup;
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (g >= group) break;
    if (lane == 0) {
      sm_m[warp * kMaxGroup + g] = m[g];
      sm_l[warp * kMaxGroup + g] = l[g];
    }
    if (active) {
#pragma unroll
      for (int i = 0; i < E; ++i) sm_o[(warp * kMaxGroup + g) * hd + lane * E + i] = acc[g][i];
    }
  }
  __syncthreads();
  const int64_t base = ((int64_t{blockIdx.x} * shape.num_kv_heads + kvh) * splits + z) * group;
  for (int e = threadIdx.x; e < group * hd; e += blockDim.x) {
    const int g = e / hd, c = e % hd;
    float mx = -INFINITY;
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, sm_m[w * kMaxGroup + g]);
    float lsum = 0.f, o = 0.f;
    if (mx != -INFINITY) {
      for (int w = 0; w < kWarps; ++w) {
        const float f = __expf(sm_m[w * kMaxGroup + g] - mx);
        lsum += sm_l[w * kMaxGroup + g] * f;
        o += sm_o[(w * kMaxGroup + g) * hd + c] * f;
      }
    }
    ws[(base + g) * (hd + 2) + 2 + c] = o;
    if (c == 0) {
      ws[(base + g) * (hd + 2)] = mx;
      ws[(base + g) * (hd + 2) + 1] = lsum;
    }
  }
}

template <typename T>
__global__ void decode_combine_kernel(const float* ws, const AttentionTile* tiles, AttentionShape shape, int splits,
                                      T* out) {
  const int kvh = blockIdx.y;
  const int group = shape.num_heads / shape.num_kv_heads;
  const int hd = shape.head_dim;
  const AttentionTile tile = tiles[blockIdx.x];
  const int64_t out_stride = int64_t{shape.num_heads} * hd;
  for (int e = threadIdx.x; e < group * hd; e += blockDim.x) {
    const int g = e / hd, c = e % hd;
    float mx = -INFINITY;
    for (int z = 0; z < splits; ++z) {
      const int64_t b = ((int64_t{blockIdx.x} * shape.num_kv_heads + kvh) * splits + z) * group + g;
      mx = fmaxf(mx, ws[b * (hd + 2)]);
    }
    float lsum = 0.f, o = 0.f;
    for (int z = 0; z < splits; ++z) {
      const int64_t b = ((int64_t{blockIdx.x} * shape.num_kv_heads + kvh) * splits + z) * group + g;
      const float mz = ws[b * (hd + 2)];
      if (mz == -INFINITY) continue;
      const float f = __expf(mz - mx);
      lsum += ws[b * (hd + 2) + 1] * f;
      o += ws[b * (hd + 2) + 2 + c] * f;
    }
    out[int64_t{tile.row0} * out_stride + int64_t{kvh * group + g} * hd + c] = from_f32<T>(o / lsum);
  }
}

template <typename T, int E>
Status launch(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles, int32_t splits,
              int64_t chunk, const PagedSeqDesc* seqs, const int32_t* tables, int32_t layer,
              const AttentionShape& shape, float* ws, cudaStream_t stream) {
  const size_t smem = (2 * kWarps * kMaxGroup + size_t(kWarps) * kMaxGroup * shape.head_dim) * sizeof(float);
  auto kernel = decode_split_kernel<T, E>;
  DI_RETURN_IF_ERROR(cuda_status(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
      "decode_attention smem"));
  const dim3 grid(num_tiles, shape.num_kv_heads, splits);
  kernel<<<grid, kWarps * 32, smem, stream>>>(static_cast<const T*>(q), q_stride, tiles, seqs, tables, layer, shape,
                                              chunk, ws);
  DI_RETURN_IF_ERROR(launch_status("decode_split_kernel"));
  decode_combine_kernel<T><<<dim3(num_tiles, shape.num_kv_heads), 256, 0, stream>>>(ws, tiles, shape, splits,
                                                                                    static_cast<T*>(out));
  return launch_status("decode_combine_kernel");
}

}  // namespace

bool decode_attention_supports(const AttentionShape& shape) {
  if (shape.num_kv_heads <= 0 || shape.num_heads % shape.num_kv_heads) return false;
  const int group = shape.num_heads / shape.num_kv_heads;
  const bool dims = (shape.head_dim % 32 == 0 && shape.head_dim <= 256) || (shape.head_dim > 0 && shape.head_dim < 32);
  return dims && group <= kMaxGroup;
}

int32_t decode_attention_splits(int32_t num_tiles, int64_t max_context, const AttentionShape& shape) {
  // Aim at ~2 blocks per SM of an H100/H200 (132 SMs), never below 64 keys per chunk.
  const int64_t blocks = int64_t{num_tiles} * shape.num_kv_heads;
  int64_t splits = (264 + blocks - 1) / std::max<int64_t>(1, blocks);
  splits = std::min<int64_t>(splits, (max_context + 63) / 64);
  return static_cast<int32_t>(std::max<int64_t>(1, splits));
}

int64_t decode_attention_workspace_bytes(int32_t num_tiles, int32_t splits, const AttentionShape& shape) {
  return int64_t{num_tiles} * shape.num_heads * splits * (shape.head_dim + 2) * 4;
}

Status decode_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                        int32_t splits, int64_t max_context, const PagedSeqDesc* seqs, const int32_t* block_tables,
                        int32_t layer, const AttentionShape& shape, void* workspace, DType dtype, void* stream,
                        int64_t chunk_keys) {
  if (num_tiles <= 0) return Status::ok();
  if (!decode_attention_supports(shape))
    return Status::invalid_argument(
        "decode_attention: needs head_dim below 32 or a multiple of 32 up to 256, <= 8 heads per kv head");
  if (splits < 1) return Status::invalid_argument("decode_attention: splits must be >= 1");
  if (chunk_keys < 0 || (chunk_keys > 0 && chunk_keys * splits < max_context))
    return Status::invalid_argument("decode_attention: " + std::to_string(splits) + " chunks of " +
                                    std::to_string(chunk_keys) + " keys cannot cover " + std::to_string(max_context));
  const int64_t chunk = chunk_keys > 0 ? chunk_keys : (max_context + splits - 1) / splits;
  auto* ws = static_cast<float*>(workspace);
  const int e = shape.head_dim < 32 ? 1 : shape.head_dim / 32;
  return dispatch_dtype(dtype, [&](auto t) -> Status {
    using T = decltype(t);
    const cudaStream_t s = as_stream(stream);
    switch (e) {
      case 1: return launch<T, 1>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 2: return launch<T, 2>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 3: return launch<T, 3>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 4: return launch<T, 4>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 5: return launch<T, 5>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 6: return launch<T, 6>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      case 7: return launch<T, 7>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
      default: return launch<T, 8>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, block_tables, layer, shape, ws, s);
    }
  });
}

}  // namespace di::kernels::cuda
