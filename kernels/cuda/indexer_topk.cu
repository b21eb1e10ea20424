// indexer_topk_varlen: see indexer_topk.h. Scores: blocks per row sized to fill the GPU, a lane
// per head (on tensor cores: indexer_scores_mma.cuh). Selection: one block per row, a radix
// selection over the row's scores.
#include <algorithm>
#include <string>

#include <cub/block/block_scan.cuh>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/indexer_scores_mma.cuh"
#include "kernels/cuda/indexer_topk.h"
#include "kernels/sampling_math.h"

namespace di::kernels::cuda {
namespace {

constexpr int kSelectThreads = 1024;
constexpr int kBins = 256;  // one 8-bit digit of a score's key a pass

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
  pdl_sync();
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

// A score's radix key, -0 folded into +0 so that equal scores have equal keys (ties then go to the
// lower index, as when scores are compared as floats).
__device__ __forceinline__ uint32_t score_key(float v) { return order_key(v == 0.f ? 0.f : v); }

// A block per row: the topk-th largest key by four 8-bit radix passes over the row's scores (a
// histogram of the keys that share the digits chosen so far, then the digit holding the topk-th),
// then one pass that writes every entry above it and the lowest-indexed entries equal to it, in
// index order. A bitonic sort of the row in shared memory took ~41 us for 1k entries on an H200
// (66 synchronised stages on one SM); this is four histograms and a scan.
__global__ void __launch_bounds__(kSelectThreads) select_varlen_kernel(IndexerVarlenArgs a) {
  pdl_sync();
  using Scan = cub::BlockScan<int, kSelectThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint32_t hist[kBins];
  __shared__ uint32_t picked_prefix;
  __shared__ int picked_need;
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
  const int lane = threadIdx.x & 31;
  uint32_t prefix = 0, mask = 0;
  int need = a.topk;  // members still to take at or below the digits chosen so far
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    for (int64_t base = 0; base < visible; base += blockDim.x) {  // the same trip count in every lane
      const int64_t e = base + threadIdx.x;
      const uint32_t key = e < visible ? score_key(s[e]) : 0;
      const int bin = e < visible && (key & mask) == prefix ? static_cast<int>((key >> shift) & 0xff) : -1;
      // Lanes on one bin add once: the leading digits of similar scores put most lanes on a bin.
      const unsigned peers = __match_any_sync(0xffffffffu, bin);
      if (bin >= 0 && lane == __ffs(static_cast<int>(peers)) - 1) atomicAdd(&hist[bin], __popc(peers));
    }
    __syncthreads();
    if (threadIdx.x < 32) {  // lane l holds bins 255 - 8l .. 248 - 8l: counts from the top
      uint32_t c[8], total = 0;
      for (int q = 0; q < 8; ++q) total += (c[q] = hist[kBins - 1 - (lane * 8 + q)]);
      uint32_t incl = total;
      for (int o = 1; o < 32; o <<= 1) {
        const uint32_t v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
      }
      uint32_t above = incl - total;
      for (int q = 0; q < 8; ++q) {
        const uint32_t b = kBins - 1 - (lane * 8 + q);
        if (above < static_cast<uint32_t>(need) && above + c[q] >= static_cast<uint32_t>(need)) {
          picked_prefix = prefix | (b << shift);
          picked_need = need - static_cast<int>(above);
        }
        above += c[q];
      }
    }
    __syncthreads();
    prefix = picked_prefix;
    need = picked_need;
    mask |= 0xffu << shift;
  }
  // prefix is now the topk-th largest key; `need` entries equal to it are taken, lowest index first.
  int written = 0, equal_seen = 0;
  for (int64_t base = 0; base < visible; base += blockDim.x) {
    const int64_t e = base + threadIdx.x;
    const uint32_t key = e < visible ? score_key(s[e]) : 0;
    const bool above = e < visible && key > prefix, equal = e < visible && key == prefix;
    int before, total;  // low 16 bits: entries above; high: entries equal (a chunk has at most 1024)
    Scan(scan).ExclusiveSum(int{above} | (int{equal} << 16), before, total);
    const int equal_left = max(0, need - equal_seen), equal_before = before >> 16;
    if (above || (equal && equal_before < equal_left))
      out[written + (before & 0xffff) + min(equal_before, equal_left)] = static_cast<int32_t>(e);
    written += (total & 0xffff) + min(total >> 16, equal_left);
    equal_seen += total >> 16;
    __syncthreads();  // the scan's storage is reused
  }
  if (threadIdx.x == 0) a.count[i] = a.topk;
}

}  // namespace

Status indexer_topk_varlen(const IndexerVarlenArgs& a, void* stream) {
  const int64_t rows = a.batch.num_tokens;
  if (rows <= 0) return Status::ok();
  if (a.rate <= 0 || a.topk <= 0 || a.heads <= 0 || a.head_dim <= 0)
    return Status::invalid_argument("indexer_topk_varlen: rate, topk, heads and head_dim must be > 0");
  if (rows > 65535) return Status::invalid_argument("indexer_topk_varlen: more than 65535 rows in one launch");
  const bool mma = a.tensor_cores && a.heads <= indexer_mma::kHeads && a.head_dim % 16 == 0 &&
                   a.head_dim <= indexer_mma::kMaxDim;
  if (a.max_visible > a.topk && mma) {
    const size_t bytes = indexer_mma::smem_bytes(a.head_dim);
    static const bool wide = cudaFuncSetAttribute(indexer_mma::score_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(indexer_mma::smem_bytes(indexer_mma::kMaxDim))) ==
                             cudaSuccess;
    if (!wide && bytes > 48 * 1024)
      return Status::unsupported("indexer_topk_varlen: the tensor-core tiles do not fit shared memory");
    const int64_t per_row = (4 * int64_t{device_sm_count()} + rows - 1) / rows;
    const int64_t most = (a.max_visible + indexer_mma::kEntries - 1) / indexer_mma::kEntries;
    const dim3 grid(static_cast<unsigned>(std::clamp<int64_t>(per_row, 1, most)), static_cast<unsigned>(rows));
    launch_pdl(indexer_mma::score_kernel, grid, indexer_mma::kThreads, bytes, as_stream(stream), a);
    DI_RETURN_IF_ERROR(launch_status("indexer scores varlen (tensor cores)"));
  } else if (a.max_visible > a.topk) {
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
    launch_pdl(score_varlen_kernel, grid, kScoreWarps * 32, qbytes, as_stream(stream), a);
    DI_RETURN_IF_ERROR(launch_status("indexer scores varlen"));
  }
  launch_pdl(select_varlen_kernel, rows, kSelectThreads, 0, as_stream(stream), a);
  return launch_status("indexer select varlen");
}

}  // namespace di::kernels::cuda
