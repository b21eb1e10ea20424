// indexer_topk_varlen: see indexer_topk.h. Scores: blocks per row sized to fill the GPU, a lane
// per head. Selection: one block per row sorts (score, index) pairs in shared memory (bitonic), or
// takes topk argmax passes when the row sees more entries than shared memory holds.
#include <algorithm>
#include <string>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/indexer_topk.h"

namespace di::kernels::cuda {
namespace {

constexpr int64_t kSortLimit = 8192;  // (score, index) pairs in shared memory: 64 KiB

// A block per (row, slice of entries): the row's queries sit in shared memory, a warp scores one
// entry at a time with a lane per head, and sums the heads once. Each head's dot product keeps
// four partial sums (one per component of a 16-byte load): a single running sum made every entry
// a 128-long chain of dependent FMAs, and with a block per 64 entries a 1k-entry row took ~78 us
// on an H200. A score's arithmetic does not depend on the grid, so neither do its bits.
constexpr int kScoreWarps = 8;

// Floats between two heads' queries in shared memory: 16-byte aligned rows, and a stride of 4
// banks so a quarter-warp's 16-byte loads fall in distinct banks.
__host__ __device__ constexpr int query_stride(int head_dim) { return head_dim + 4; }

__global__ void __launch_bounds__(kScoreWarps * 32) score_varlen_kernel(IndexerVarlenArgs a) {
  extern __shared__ __align__(16) float qs[];  // [heads][stride], [heads] weights, a key per warp
  const int64_t i = blockIdx.y;
  const int32_t seq = a.batch.seq[i];
  if (seq < 0) return;
  const int64_t visible = (int64_t{a.batch.pos[i]} + 1) / a.rate;
  if (visible <= a.topk) return;
  const int hd = a.head_dim, nh = a.heads, ld = query_stride(hd), hd4 = hd / 4;
  float* ws = qs + nh * ld;
  float* keys_smem = ws + (nh + 3) / 4 * 4;
  for (int t = threadIdx.x; t < nh * hd; t += blockDim.x) qs[(t / hd) * ld + t % hd] = a.q[i * nh * hd + t];
  for (int h = threadIdx.x; h < nh; h += blockDim.x) ws[h] = a.weights[i * nh + h] * a.weight_scale;
  __syncthreads();
  const CacheView& keys = seq_view(a.batch, seq, a.key_group);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* key = keys_smem + warp * hd;  // the warp's entry, loaded once with coalesced reads
  const float4* key4 = reinterpret_cast<const float4*>(key);
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kScoreWarps + warp; e < visible;
       e += int64_t{gridDim.x} * kScoreWarps) {
    const float* src = cache_entry(keys, a.key_layer, e);
    __syncwarp();
    for (int d = lane; d < hd; d += 32) key[d] = src[d];
    __syncwarp();
    float score = 0.f;
    for (int h = lane; h < nh; h += 32) {
      const float4* q4 = reinterpret_cast<const float4*>(qs + h * ld);
      float p0 = 0.f, p1 = 0.f, p2 = 0.f, p3 = 0.f;
#pragma unroll 8
      for (int d = 0; d < hd4; ++d) {
        const float4 q = q4[d], k = key4[d];
        p0 += q.x * k.x;
        p1 += q.y * k.y;
        p2 += q.z * k.z;
        p3 += q.w * k.w;
      }
      const float dot = (p0 + p1) + (p2 + p3);
      score += fmaxf(dot, 0.f) * a.softmax_scale * ws[h];
    }
    score = warp_sum(score);
    if (lane == 0) a.scores[i * a.max_visible + e] = score;
  }
}

// a before b: higher score, or the same score and a lower index.
__device__ __forceinline__ bool ranks_before(float sa, int32_t ia, float sb, int32_t ib) {
  return sa > sb || (sa == sb && ia < ib);
}

__global__ void select_varlen_kernel(IndexerVarlenArgs a) {
  extern __shared__ float sort_scores[];  // [pow2 >= visible], then as many indices
  const int64_t i = blockIdx.x;
  int32_t* out = a.selected + i * a.topk;
  const int32_t seq = a.batch.seq[i];
  const int64_t visible = seq < 0 ? 0 : (int64_t{a.batch.pos[i]} + 1) / a.rate;
  if (visible <= a.topk) {
    for (int64_t e = threadIdx.x; e < visible; e += blockDim.x) out[e] = static_cast<int32_t>(e);
    if (threadIdx.x == 0) a.count[i] = static_cast<int32_t>(visible);
    return;
  }
  const float* s = a.scores + i * a.max_visible;
  if (visible <= kSortLimit) {
    int64_t n = 1;
    while (n < visible) n <<= 1;
    int32_t* idx = reinterpret_cast<int32_t*>(sort_scores + kSortLimit);
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
      sort_scores[e] = e < visible ? s[e] : -INFINITY;
      idx[e] = e < visible ? static_cast<int32_t>(e) : INT32_MAX;
    }
    __syncthreads();
    for (int64_t k = 2; k <= n; k <<= 1)
      for (int64_t j = k >> 1; j > 0; j >>= 1) {
        for (int64_t t = threadIdx.x; t < n; t += blockDim.x) {
          const int64_t u = t ^ j;
          if (u <= t) continue;
          const bool first_half = (t & k) == 0;  // this run sorts best-first
          const bool t_first = ranks_before(sort_scores[t], idx[t], sort_scores[u], idx[u]);
          if (first_half != t_first) {
            const float sv = sort_scores[t];
            sort_scores[t] = sort_scores[u];
            sort_scores[u] = sv;
            const int32_t iv = idx[t];
            idx[t] = idx[u];
            idx[u] = iv;
          }
        }
        __syncthreads();
      }
    for (int64_t k = threadIdx.x; k < a.topk; k += blockDim.x) out[k] = idx[k];
    if (threadIdx.x == 0) a.count[i] = a.topk;
    return;
  }
  // More entries than shared memory holds: topk argmax passes over the row's scores (scratch:
  // a taken entry becomes NaN).
  float* w = a.scores + i * a.max_visible;
  for (int k = 0; k < a.topk; ++k) {
    float bv = -INFINITY;
    int bi = -1;
    for (int64_t e = threadIdx.x; e < visible; e += blockDim.x) argmax_merge(bv, bi, w[e], static_cast<int>(e));
    const int b = block_argmax(bv, bi);
    if (threadIdx.x == 0) {
      out[k] = b;
      w[b] = NAN;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) a.count[i] = a.topk;
}

}  // namespace

int64_t indexer_sort_limit() { return kSortLimit; }

Status indexer_topk_varlen(const IndexerVarlenArgs& a, void* stream) {
  const int64_t rows = a.batch.num_tokens;
  if (rows <= 0) return Status::ok();
  if (a.rate <= 0 || a.topk <= 0 || a.heads <= 0 || a.head_dim <= 0)
    return Status::invalid_argument("indexer_topk_varlen: rate, topk, heads and head_dim must be > 0");
  if (rows > 65535) return Status::invalid_argument("indexer_topk_varlen: more than 65535 rows in one launch");
  if (a.max_visible > a.topk) {
    if (a.head_dim % 4 != 0)
      return Status::invalid_argument("indexer_topk_varlen: head_dim " + std::to_string(a.head_dim) +
                                      " is not a multiple of 4");
    const size_t qbytes = (static_cast<size_t>(a.heads) * query_stride(a.head_dim) + (a.heads + 3) / 4 * 4 +
                           kScoreWarps * a.head_dim) *
                          sizeof(float);
    if (qbytes > 48 * 1024) {
      const cudaError_t err = cudaFuncSetAttribute(score_varlen_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(qbytes));
      if (err != cudaSuccess) return Status::unsupported("indexer_topk_varlen: the queries do not fit shared memory");
    }
    // Two blocks per SM over the batch, no more than an entry per warp.
    const int64_t per_row = (2 * int64_t{device_sm_count()} + rows - 1) / rows;
    const int64_t most = (a.max_visible + kScoreWarps - 1) / kScoreWarps;
    const dim3 grid(static_cast<unsigned>(std::clamp<int64_t>(per_row, 1, most)), static_cast<unsigned>(rows));
    score_varlen_kernel<<<grid, kScoreWarps * 32, qbytes, as_stream(stream)>>>(a);
    DI_RETURN_IF_ERROR(launch_status("indexer scores varlen"));
  }
  static const bool smem_ok = [] {
    return cudaFuncSetAttribute(select_varlen_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(kSortLimit * 8)) == cudaSuccess;
  }();
  if (!smem_ok) return Status::device("indexer_topk_varlen: 64 KiB of shared memory per block is not available");
  const size_t smem = a.max_visible > a.topk ? static_cast<size_t>(kSortLimit * 8) : 0;
  select_varlen_kernel<<<rows, 1024, smem, as_stream(stream)>>>(a);
  return launch_status("indexer select varlen");
}

}  // namespace di::kernels::cuda
