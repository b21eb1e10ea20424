// Kernels of decode_attention.h. Block (row, kv head, split) of 4 warps. A key's row is held by
// H lanes of a warp (H = 16 where the head fits, so a warp reads two keys per load and a score
// needs four shuffles, not five per key), each lane E consecutive channels of q (for every query
// head of the group), K and V; V is applied without shared memory. Each warp loads U rounds of
// keys before any math, so several key rows per lane are in flight (the kernel is bound by how
// many bytes it keeps in flight, not by arithmetic). Every lane group keeps its own online
// softmax; the groups merge by shuffles, the warps in shared memory, the splits in the second
// kernel.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/decode_attention.h"

namespace di::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;

template <int Bytes>
struct alignas(Bytes) RawVec {
  uint8_t b[Bytes];
};

// E consecutive elements in loads of up to 16 bytes when E * sizeof(T) is 4, 8 or a multiple of
// 16 (the lane's slice of a row is then aligned to its size), else element by element.
template <typename T, int E>
__device__ __forceinline__ void load_elems(const T* p, float (&out)[E]) {
  constexpr int kBytes = E * static_cast<int>(sizeof(T));
  if constexpr (kBytes == 4 || kBytes == 8 || kBytes % 16 == 0) {
    constexpr int kPiece = kBytes < 16 ? kBytes : 16;
    constexpr int kPer = kPiece / static_cast<int>(sizeof(T));
#pragma unroll
    for (int j = 0; j < kBytes / kPiece; ++j) {
      const RawVec<kPiece> raw = reinterpret_cast<const RawVec<kPiece>*>(p)[j];
      const T* t = reinterpret_cast<const T*>(raw.b);
#pragma unroll
      for (int i = 0; i < kPer; ++i) out[j * kPer + i] = to_f32(t[i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < E; ++i) out[i] = to_f32(p[i]);
  }
}

// Sum over the H lanes of a key (xor offsets below H stay inside the lane group).
template <int H>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = H / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// T: cache / query dtype; E channels per lane; H lanes per key (16 or 32); G the largest group of
// query heads per kv head this instance takes; U load rounds per iteration.
template <typename T, int E, int H, int G, int U>
__global__ void __launch_bounds__(kWarps * 32, G <= 4 ? 3 : 2) decode_split_kernel(const T* q, int64_t q_stride,
                                                                    const AttentionTile* tiles,
                                                                    const CacheView* seqs, int32_t layer,
                                                                    AttentionShape shape, int64_t chunk, float* ws) {
  constexpr int kGroups = 32 / H;            // keys a warp reads per round
  constexpr int kPerWarp = kGroups * U;      // keys a warp takes per iteration
  const AttentionTile tile = tiles[blockIdx.x];
  const int kvh = blockIdx.y, z = blockIdx.z, splits = gridDim.z;
  const int group = shape.num_heads / shape.num_kv_heads;
  const int hd = shape.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int key_group = lane / H, sub = lane % H;
  const CacheView d = seqs[tile.seq];
  const int64_t width = int64_t{shape.num_kv_heads} * hd;
  const int64_t begin = z * chunk;
  const int64_t end = min(begin + chunk, int64_t{tile.pos0} + 1);
  // Head dims below H * E: lanes past the head hold zeros, adding nothing to the scores.
  const bool active = sub * E < hd;

  float qr[G][E], acc[G][E], m[G], l[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < E; ++i) acc[g][i] = qr[g][i] = 0.f;
    if (g < group && active) {
      load_elems<T, E>(q + int64_t{tile.row0} * q_stride + int64_t{kvh * group + g} * hd + sub * E, qr[g]);
#pragma unroll
      for (int i = 0; i < E; ++i) qr[g][i] *= shape.scale;
    }
  }
  // Key of (iteration base k0, round u) for this lane group: k0 + (u * kGroups + key_group) * kWarps.
  for (int64_t k0 = begin + warp; k0 < end; k0 += int64_t{kPerWarp} * kWarps) {
    float kv[U][E], vv[U][E];
    bool valid[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t k = k0 + int64_t{u * kGroups + key_group} * kWarps;
      valid[u] = k < end;
#pragma unroll
      for (int i = 0; i < E; ++i) kv[u][i] = vv[u][i] = 0.f;
      if (valid[u] && active) {
        const T* ent = cache_entry<const T>(d, layer, k);
        load_elems<T, E>(ent + int64_t{kvh} * hd + sub * E, kv[u]);
        load_elems<T, E>(ent + width + int64_t{kvh} * hd + sub * E, vv[u]);
      }
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (g >= group) break;
      float s[U];
      float m_new = m[g];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float dot = 0.f;
#pragma unroll
        for (int i = 0; i < E; ++i) dot = fmaf(qr[g][i], kv[u][i], dot);
        dot = group_sum<H>(dot);
        s[u] = valid[u] ? dot : -INFINITY;
        m_new = fmaxf(m_new, s[u]);
      }
      if (m_new == -INFINITY) continue;  // no key of this lane group yet
      const float alpha = __expf(m[g] - m_new);  // m = -inf at first: exp(-inf) = 0
      float lsum = l[g] * alpha;
#pragma unroll
      for (int i = 0; i < E; ++i) acc[g][i] *= alpha;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float p = __expf(s[u] - m_new);  // 0 for a missing key
        lsum += p;
#pragma unroll
        for (int i = 0; i < E; ++i) acc[g][i] = fmaf(p, vv[u][i], acc[g][i]);
      }
      l[g] = lsum;
      m[g] = m_new;
    }
  }
  // Merge the lane groups of a warp (lanes sub and sub + H hold the same channels).
#pragma unroll
  for (int o = H; o < 32; o <<= 1) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (g >= group) break;
      const float mo = __shfl_xor_sync(0xffffffffu, m[g], o);
      const float lo = __shfl_xor_sync(0xffffffffu, l[g], o);
      const float mx = fmaxf(m[g], mo);
      const float fa = m[g] == -INFINITY ? 0.f : __expf(m[g] - mx);
      const float fb = mo == -INFINITY ? 0.f : __expf(mo - mx);
      l[g] = l[g] * fa + lo * fb;
#pragma unroll
      for (int i = 0; i < E; ++i) {
        const float ao = __shfl_xor_sync(0xffffffffu, acc[g][i], o);
        acc[g][i] = acc[g][i] * fa + ao * fb;
      }
      m[g] = mx;
    }
  }
  // Merge the warps: shared [warp][g] stats and [warp][g][hd] outputs.
  extern __shared__ float sm[];
  float* sm_m = sm;
  float* sm_l = sm + kWarps * kMaxGroup;
  float* sm_o = sm + 2 * kWarps * kMaxGroup;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (g >= group) break;
    if (lane == 0) {
      sm_m[warp * kMaxGroup + g] = m[g];
      sm_l[warp * kMaxGroup + g] = l[g];
    }
    if (active && key_group == 0) {
#pragma unroll
      for (int i = 0; i < E; ++i) sm_o[(warp * kMaxGroup + g) * hd + sub * E + i] = acc[g][i];
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
        const float wm = sm_m[w * kMaxGroup + g];
        if (wm == -INFINITY) continue;  // a warp that saw no key
        const float f = __expf(wm - mx);
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

template <typename T, int E, int H, int G>
Status launch(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles, int32_t splits,
              int64_t chunk, const CacheView* seqs, int32_t layer, const AttentionShape& shape, float* ws,
              cudaStream_t stream) {
  // Four rounds: 16 key rows of K and V in flight per warp. At three blocks an SM (the registers'
  // limit for groups of 4) that is what keeps an H200's reads near its bandwidth.
  constexpr int kRounds = 4;
  const size_t smem = (2 * kWarps * kMaxGroup + size_t(kWarps) * kMaxGroup * shape.head_dim) * sizeof(float);
  auto kernel = decode_split_kernel<T, E, H, G, kRounds>;
  DI_RETURN_IF_ERROR(cuda_status(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
      "decode_attention smem"));
  const dim3 grid(num_tiles, shape.num_kv_heads, splits);
  kernel<<<grid, kWarps * 32, smem, stream>>>(static_cast<const T*>(q), q_stride, tiles, seqs, layer, shape, chunk,
                                              ws);
  DI_RETURN_IF_ERROR(launch_status("decode_split_kernel"));
  decode_combine_kernel<T><<<dim3(num_tiles, shape.num_kv_heads), 256, 0, stream>>>(ws, tiles, shape, splits,
                                                                                    static_cast<T*>(out));
  return launch_status("decode_combine_kernel");
}

// The instance for a head: 16 lanes a key where the head is a multiple of 16 up to 128 channels
// (E = head_dim / 16), else 32 lanes (E = head_dim / 32 for multiples of 32, 1 below 32).
template <typename T, int G>
Status launch_for_head(int hd, const void* q, int64_t q_stride, void* out, const AttentionTile* tiles,
                       int32_t num_tiles, int32_t splits, int64_t chunk, const CacheView* seqs, int32_t layer,
                       const AttentionShape& shape, float* ws, cudaStream_t s) {
#define DI_DECODE_LAUNCH(E, H) \
  launch<T, E, H, G>(q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, layer, shape, ws, s)
  switch (hd) {
    case 16: return DI_DECODE_LAUNCH(1, 16);
    case 32: return DI_DECODE_LAUNCH(2, 16);
    case 64: return DI_DECODE_LAUNCH(4, 16);
    case 96: return DI_DECODE_LAUNCH(6, 16);
    case 128: return DI_DECODE_LAUNCH(8, 16);
    case 160: return DI_DECODE_LAUNCH(5, 32);
    case 192: return DI_DECODE_LAUNCH(6, 32);
    case 224: return DI_DECODE_LAUNCH(7, 32);
    case 256: return DI_DECODE_LAUNCH(8, 32);
    default: return DI_DECODE_LAUNCH(1, 32);  // below 32
  }
#undef DI_DECODE_LAUNCH
}

}  // namespace

bool decode_attention_supports(const AttentionShape& shape) {
  if (shape.num_kv_heads <= 0 || shape.num_heads % shape.num_kv_heads) return false;
  const int group = shape.num_heads / shape.num_kv_heads;
  const bool dims = (shape.head_dim % 32 == 0 && shape.head_dim <= 256) || (shape.head_dim > 0 && shape.head_dim < 32);
  return dims && group <= kMaxGroup;
}

int32_t decode_attention_splits(int32_t num_tiles, int64_t max_context, const AttentionShape& shape) {
  // Aim at ~4 blocks per SM of an H100/H200 (132 SMs): a block keeps only a few key rows per
  // lane in flight, so the grid must be wide to reach the read bandwidth. Never below 64 keys
  // per chunk.
  const int64_t blocks = int64_t{num_tiles} * shape.num_kv_heads;
  int64_t splits = (528 + blocks - 1) / std::max<int64_t>(1, blocks);
  splits = std::min<int64_t>(splits, (max_context + 63) / 64);
  return static_cast<int32_t>(std::max<int64_t>(1, splits));
}

int64_t decode_attention_workspace_bytes(int32_t num_tiles, int32_t splits, const AttentionShape& shape) {
  return int64_t{num_tiles} * shape.num_heads * splits * (shape.head_dim + 2) * 4;
}

Status decode_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                        int32_t splits, int64_t max_context, const CacheView* seqs, int32_t layer,
                        const AttentionShape& shape, void* workspace, DType dtype, void* stream, int64_t chunk_keys) {
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
  const int group = shape.num_heads / shape.num_kv_heads;
  return dispatch_dtype(dtype, [&](auto t) -> Status {
    using T = decltype(t);
    const cudaStream_t s = as_stream(stream);
    if (group <= 4)
      return launch_for_head<T, 4>(shape.head_dim, q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, layer,
                                   shape, ws, s);
    return launch_for_head<T, 8>(shape.head_dim, q, q_stride, out, tiles, num_tiles, splits, chunk, seqs, layer, shape,
                                 ws, s);
  });
}

}  // namespace di::kernels::cuda
