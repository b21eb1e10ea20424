// Device sampling: one cluster of kCluster blocks (1024 threads each) per row, each block owning
// a contiguous slice of the vocabulary; the blocks combine their partial results through
// distributed shared memory (Hopper's thread-block clusters). A row's passes were one SM's work
// before: a top-p draw over 129k logits took ~0.4 ms. Passes over the row: copy + edits, max, the
// fixed-point weights, a radix selection per truncation (four 8-bit digits, per-warp histograms
// in shared memory summed over the cluster, so no global atomics and integer sums only), the kept
// total, and a chunked prefix sum in token-id order (block slices in rank order) for the draw.
// Integer masses make the result the same as the CPU sampler's whatever the reduction order.
#include <cuda_runtime.h>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <string>

#include "kernels/keyed_rng.h"
#include "kernels/sampling_math.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/sampling.h"

namespace di::kernels::cuda {
namespace {

// The draw and the filters are kernels/sampling_math.h's and keyed_rng.h's (the enclosing
// namespace), the same functions the CPU sampler calls.
namespace cg = cooperative_groups;

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kBuckets = 256;
constexpr int kCluster = 8;  // blocks per row: the portable cluster size

struct Best {
  float v;
  int i;
};
struct BestOp {
  __device__ Best operator()(const Best& a, const Best& b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
  }
};

struct Shared {
  union {
    typename cub::BlockReduce<Best, kThreads>::TempStorage best;
    typename cub::BlockReduce<uint64_t, kThreads>::TempStorage u64;
    typename cub::BlockReduce<double, kThreads>::TempStorage f64;
    typename cub::BlockReduce<int, kThreads>::TempStorage i32;
    typename cub::BlockScan<uint64_t, kThreads>::TempStorage scan;
  } cub;
  uint32_t count[kWarps][kBuckets];
  // A bucket's mass as 32-bit halves: 32-bit shared atomics are native, 64-bit adds are not, and
  // top-p's first digits put most of a warp's lanes on one bucket (measured on an H200: 0.58 ms
  // per 129k-token row with 64-bit atomics).
  uint32_t mass_lo[kWarps][kBuckets];
  uint32_t mass_hi[kWarps][kBuckets];
  uint64_t total_mass[kBuckets];
  uint32_t total_count[kBuckets];
  uint64_t cluster_mass[kBuckets];  // total_* summed over the cluster's blocks
  uint32_t cluster_count[kBuckets];
  Best best;
  uint64_t u64;
  double f64;
  uint32_t key;
  int i32;
  // This block's contribution to a cluster-wide combine, read by the others.
  Best slot_best;
  uint64_t slot_u64;
  double slot_f64;
  int slot_i32;
};

// The cluster-wide combine of one value per block (thread 0's `v`), in block-rank order, so every
// block gets the same result. Every thread of every block calls it.
template <typename T, typename Op>
__device__ T cluster_combine(cg::cluster_group& cl, T& slot, T v, Op op) {
  if (threadIdx.x == 0) slot = v;
  cl.sync();
  T acc = *cl.map_shared_rank(&slot, 0);
  for (int r = 1; r < kCluster; ++r) acc = op(acc, *cl.map_shared_rank(&slot, r));
  cl.sync();  // every block has read the slots before any is written again
  return acc;
}
struct SumOp {
  template <typename T>
  __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
struct MaxOp {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

// Truncation threshold: the smallest key such that every member above it keeps the predicate.
// Members: finite logits with key >= member_low. Weight: 1 (kMass false: top-k, keep while fewer
// than `k` are above) or the draw weight (top-p over `total`).
template <bool kMass>
__device__ uint32_t radix_low(cg::cluster_group& cl, const float* x, const uint64_t* w, int lo, int hi,
                              uint32_t member_low, int k, uint64_t total, double top_p, Shared& sh) {
  const int warp = threadIdx.x >> 5;
  uint32_t prefix = 0, prefix_mask = 0;
  uint64_t above = 0;
  for (int level = 0; level < 4; ++level) {
    const int shift = 24 - 8 * level;
    for (int j = threadIdx.x; j < kWarps * kBuckets; j += kThreads) {
      (&sh.count[0][0])[j] = 0;
      (&sh.mass_lo[0][0])[j] = 0;
      (&sh.mass_hi[0][0])[j] = 0;
    }
    __syncthreads();
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) {
      const float v = x[i];
      if (!(v > -INFINITY)) continue;
      const uint32_t key = order_key(v);
      if (key < member_low || (key & prefix_mask) != prefix) continue;
      const int b = (key >> shift) & (kBuckets - 1);
      atomicAdd(&sh.count[warp][b], 1u);
      const uint64_t m = kMass ? w[i] : 1;
      const uint32_t mlo = static_cast<uint32_t>(m), mhi = static_cast<uint32_t>(m >> 32);
      const uint32_t old = atomicAdd(&sh.mass_lo[warp][b], mlo);
      const uint32_t carry = old + mlo < old ? 1u : 0u;  // the low half wrapped: exact in two halves
      if (mhi + carry) atomicAdd(&sh.mass_hi[warp][b], mhi + carry);
    }
    __syncthreads();
    if (threadIdx.x < kBuckets) {
      uint32_t c = 0;
      uint64_t m = 0;
      for (int q = 0; q < kWarps; ++q) {
        c += sh.count[q][threadIdx.x];
        m += sh.mass_lo[q][threadIdx.x] + (uint64_t{sh.mass_hi[q][threadIdx.x]} << 32);
      }
      sh.total_count[threadIdx.x] = c;
      sh.total_mass[threadIdx.x] = m;
    }
    cl.sync();  // every block's histogram is complete
    if (threadIdx.x < kBuckets) {
      uint32_t c = 0;
      uint64_t m = 0;
      for (int r = 0; r < kCluster; ++r) {
        c += cl.map_shared_rank(sh.total_count, r)[threadIdx.x];
        m += cl.map_shared_rank(sh.total_mass, r)[threadIdx.x];
      }
      sh.cluster_count[threadIdx.x] = c;
      sh.cluster_mass[threadIdx.x] = m;
    }
    cl.sync();  // read before the next level overwrites total_*
    if (threadIdx.x == 0) {
      uint64_t run = above, run_at_pick = above;
      int pick = -1;
      for (int b = kBuckets - 1; b >= 0; --b) {
        if (sh.cluster_count[b] == 0) continue;
        const bool keeps = kMass ? top_p_keeps(run, total, top_p) : run < static_cast<uint64_t>(k);
        if (!keeps) break;
        pick = b;
        run_at_pick = run;
        run += sh.cluster_mass[b];
      }
      // The most likely member always stays, so some bucket is picked (the same in every block).
      sh.key = static_cast<uint32_t>(pick < 0 ? 0 : pick);
      sh.u64 = run_at_pick;
    }
    __syncthreads();
    prefix |= sh.key << shift;
    prefix_mask |= 0xffu << shift;
    above = sh.u64;
    __syncthreads();
  }
  return prefix;
}

__device__ __forceinline__ bool kept(float v, uint64_t w, uint32_t low, double min_p) {
  return w > 0 && order_key(v) >= low && (min_p <= 0.0 || min_p_keeps(w, min_p));
}

__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads)
    sample_kernel(const float* __restrict__ logits, int V, const SampleRowDesc* __restrict__ rows,
                  const SampleEditDesc* __restrict__ edits, float* __restrict__ work, uint64_t* __restrict__ weights,
                  SampleResultDesc* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  Shared& sh = *reinterpret_cast<Shared*>(smem);
  cg::cluster_group cl = cg::this_cluster();
  const int rank = static_cast<int>(cl.block_rank());
  const int row = static_cast<int>(blockIdx.x) / kCluster;
  const int span = (V + kCluster - 1) / kCluster;
  const int lo = min(V, rank * span), hi = min(V, lo + span);  // this block's slice of the vocabulary
  const SampleRowDesc r = rows[row];
  const float* in = logits + static_cast<int64_t>(r.logits_row) * V;
  uint64_t* w = weights + static_cast<int64_t>(row) * V;
  SampleResultDesc& res = out[row];
  const bool writer = rank == 0;  // writes the result (but the logprob, which the token's owner writes)

  // A row without edits reads its logits where they are: the copy was a dependent load and store
  // per element, a greedy decode row's longest pass. The branch is the row's, so the cluster's.
  const bool edited = r.edit_begin[4] > r.edit_begin[0];
  if (edited) {
#pragma unroll 4
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) work[static_cast<int64_t>(row) * V + i] = in[i];
    __syncthreads();
  }
  const float* x = edited ? work + static_cast<int64_t>(row) * V : in;
  float* edit_x = work + static_cast<int64_t>(row) * V;
  for (int kind = 0; kind < 4 && edited; ++kind) {
    for (int e = r.edit_begin[kind] + threadIdx.x; e < r.edit_begin[kind + 1]; e += kThreads) {
      const SampleEditDesc d = edits[e];
      if (d.token < lo || d.token >= hi) continue;
      float& v = edit_x[d.token];
      if (kind == 0) v += d.value;
      else if (kind == 1) v = -INFINITY;
      else if (kind == 2) v = v > 0 ? v / d.value : v * d.value;
      else v -= d.value;
    }
    __syncthreads();
  }

  // Max (first index wins ties) and the NaN check.
  Best best{-INFINITY, -1};
  int nan = 0;
#pragma unroll 4
  for (int i = lo + threadIdx.x; i < hi; i += kThreads) {
    const float v = x[i];
    if (isnan(v)) nan = 1;
    else if (best.i < 0 || v > best.v) best = {v, i};
  }
  const Best block_top = cub::BlockReduce<Best, kThreads>(sh.cub.best).Reduce(best, BestOp());
  __syncthreads();
  const int block_nan = cub::BlockReduce<int, kThreads>(sh.cub.i32).Sum(nan);
  const Best top = cluster_combine(cl, sh.slot_best, block_top, BestOp());
  const int any_nan = cluster_combine(cl, sh.slot_i32, block_nan, SumOp());
  const float max_logit = top.v;
  int token = top.i;
  if (any_nan || !(max_logit > -INFINITY) || token < 0) {  // the same in every block
    if (writer && threadIdx.x == 0) {
      res.token = -1;
      res.status = any_nan ? kSampleNaN : kSampleAllExcluded;
      res.logprob = 0;
      res.num_top = 0;
    }
    return;
  }

  if (!(r.flags & kSampleGreedy)) {
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) w[i] = draw_weight(x[i], max_logit, r.temperature);
    __syncthreads();
    uint32_t low = 0;
    if (r.top_k > 0) {
      int finite = 0;
      for (int i = lo + threadIdx.x; i < hi; i += kThreads) finite += x[i] > -INFINITY;
      const int n = cub::BlockReduce<int, kThreads>(sh.cub.i32).Sum(finite);
      const int total_finite = cluster_combine(cl, sh.slot_i32, n, SumOp());
      if (r.top_k < total_finite) low = radix_low<false>(cl, x, w, lo, hi, 0, r.top_k, 0, 0.0, sh);
    }
    if (r.top_p < 1.0) {
      uint64_t part = 0;
      for (int i = lo + threadIdx.x; i < hi; i += kThreads)
        if (x[i] > -INFINITY && order_key(x[i]) >= low) part += w[i];
      __syncthreads();
      const uint64_t block_total = cub::BlockReduce<uint64_t, kThreads>(sh.cub.u64).Sum(part);
      const uint64_t t = cluster_combine(cl, sh.slot_u64, block_total, SumOp());
      low = radix_low<true>(cl, x, w, lo, hi, low, 0, t, r.top_p, sh);
    }
    // The draw: chunk sums in id order, their exclusive scan within the block and over the
    // blocks before this one, then the chunk holding the target.
    const int chunk = (hi - lo + kThreads - 1) / kThreads;
    const int begin = min(hi, lo + static_cast<int>(threadIdx.x) * chunk), end = min(hi, begin + chunk);
    uint64_t sum = 0;
    for (int i = begin; i < end; ++i)
      if (kept(x[i], w[i], low, r.min_p)) sum += w[i];
    uint64_t excl = 0, block_total = 0;
    __syncthreads();
    cub::BlockScan<uint64_t, kThreads>(sh.cub.scan).ExclusiveSum(sum, excl, block_total);
    if (threadIdx.x == 0) sh.slot_u64 = block_total;
    cl.sync();
    uint64_t before = 0, total = 0;
    for (int q = 0; q < kCluster; ++q) {
      const uint64_t v = *cl.map_shared_rank(&sh.slot_u64, q);
      if (q < rank) before += v;
      total += v;
    }
    cl.sync();
    if (threadIdx.x == 0) sh.i32 = -1;
    __syncthreads();
    const uint64_t target = draw_target(keyed_uniform(r.seed, r.index, r.position), total);
    excl += before;
    if (sum > 0 && target >= excl && target < excl + sum) {
      uint64_t cum = excl;
      for (int i = begin; i < end; ++i) {
        if (!kept(x[i], w[i], low, r.min_p)) continue;
        cum += w[i];
        if (cum > target) {
          sh.i32 = i;
          break;
        }
      }
    }
    __syncthreads();
    const int found = cluster_combine(cl, sh.slot_i32, sh.i32, MaxOp());  // one block finds it
    token = found >= 0 ? found : token;
  }

  const bool owner = token >= lo && token < hi;
  if (writer && threadIdx.x == 0) {
    res.token = token;
    res.status = kSampleOk;
    res.num_top = 0;
    if (!(r.flags & kSampleLogprobs)) res.logprob = 0;
  }
  if (!(r.flags & kSampleLogprobs)) return;
  double s = 0;
  for (int i = lo + threadIdx.x; i < hi; i += kThreads) s += exp(static_cast<double>(x[i] - max_logit));
  __syncthreads();
  const double block_sum_exp = cub::BlockReduce<double, kThreads>(sh.cub.f64).Sum(s);
  const double sum_exp = cluster_combine(cl, sh.slot_f64, block_sum_exp, SumOp());
  const double log_z = max_logit + log(sum_exp);
  if (owner && threadIdx.x == 0) res.logprob = static_cast<float>(x[token] - log_z);
  // Top logprobs: repeated argmax, each below the previous pick in (logit desc, id asc) order.
  const int k = min(r.top_logprobs, min(V, kSampleTopLogprobs));
  float prev_v = INFINITY;
  int prev_i = -1;
  for (int j = 0; j < k; ++j) {
    Best b{-INFINITY, -1};
    for (int i = lo + threadIdx.x; i < hi; i += kThreads) {
      const float v = x[i];
      if (v > prev_v || (v == prev_v && i <= prev_i)) continue;
      if (b.i < 0 || v > b.v) b = {v, i};
    }
    __syncthreads();
    const Best block_pick = cub::BlockReduce<Best, kThreads>(sh.cub.best).Reduce(b, BestOp());
    const Best pick = cluster_combine(cl, sh.slot_best, block_pick, BestOp());
    prev_v = pick.v;
    prev_i = pick.i;
    if (writer && threadIdx.x == 0) {
      res.top_ids[j] = prev_i;
      res.top_logprobs[j] = static_cast<float>(prev_v - log_z);
      res.num_top = j + 1;
    }
  }
}

}  // namespace

Status sample_rows(const float* logits, int64_t vocab, const SampleRowDesc* rows, int32_t num_rows,
                   const SampleEditDesc* edits, float* work, uint64_t* weights, SampleResultDesc* out, void* stream) {
  if (num_rows == 0) return Status::ok();
  if (num_rows < 0 || vocab <= 0 || vocab > (int64_t{1} << 30))
    return Status::invalid_argument("sample_rows: bad row count or vocabulary size");
  if (!logits || !rows || !work || !weights || !out) return Status::invalid_argument("sample_rows: null pointer");
  const int smem = static_cast<int>(sizeof(Shared));
  static const cudaError_t attr =
      cudaFuncSetAttribute(sample_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  DI_RETURN_IF_ERROR(cuda_status(attr, "cudaFuncSetAttribute (sample_kernel)"));
  sample_kernel<<<num_rows * kCluster, kThreads, smem, static_cast<cudaStream_t>(stream)>>>(
      logits, static_cast<int>(vocab), rows, edits, work, weights, out);
  return cuda_status(cudaGetLastError(), "sample_kernel launch");
}

}  // namespace di::kernels::cuda
