// Device sampling: one block of 1024 threads per row. Passes over the row: copy + edits, max,
// the fixed-point weights, a radix selection per truncation (four 8-bit digits, per-warp
// histograms in shared memory, so no global atomics and integer sums only), the kept total, and
// a chunked prefix sum in token-id order for the draw. Integer masses make the result the same
// as the CPU sampler's whatever the reduction order.
#include <cuda_runtime.h>

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
constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kBuckets = 256;

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
  Best best;
  uint64_t u64;
  double f64;
  uint32_t key;
  int i32;
};

// Truncation threshold: the smallest key such that every member above it keeps the predicate.
// Members: finite logits with key >= member_low. Weight: 1 (kMass false: top-k, keep while fewer
// than `k` are above) or the draw weight (top-p over `total`).
template <bool kMass>
__device__ uint32_t radix_low(const float* x, const uint64_t* w, int V, uint32_t member_low, int k, uint64_t total,
                              double top_p, Shared& sh) {
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
    for (int i = threadIdx.x; i < V; i += kThreads) {
      const float v = x[i];
      if (!(v > -INFINITY)) continue;
      const uint32_t key = order_key(v);
      if (key < member_low || (key & prefix_mask) != prefix) continue;
      const int b = (key >> shift) & (kBuckets - 1);
      atomicAdd(&sh.count[warp][b], 1u);
      const uint64_t m = kMass ? w[i] : 1;
      const uint32_t lo = static_cast<uint32_t>(m), hi = static_cast<uint32_t>(m >> 32);
      const uint32_t old = atomicAdd(&sh.mass_lo[warp][b], lo);
      const uint32_t carry = old + lo < old ? 1u : 0u;  // the low half wrapped: exact in two halves
      if (hi + carry) atomicAdd(&sh.mass_hi[warp][b], hi + carry);
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
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t run = above, run_at_pick = above;
      int pick = -1;
      for (int b = kBuckets - 1; b >= 0; --b) {
        if (sh.total_count[b] == 0) continue;
        const bool keeps = kMass ? top_p_keeps(run, total, top_p) : run < static_cast<uint64_t>(k);
        if (!keeps) break;
        pick = b;
        run_at_pick = run;
        run += sh.total_mass[b];
      }
      // The most likely member always stays, so some bucket is picked.
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

__global__ void __launch_bounds__(kThreads) sample_kernel(const float* __restrict__ logits, int V,
                                                          const SampleRowDesc* __restrict__ rows,
                                                          const SampleEditDesc* __restrict__ edits,
                                                          float* __restrict__ work, uint64_t* __restrict__ weights,
                                                          SampleResultDesc* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  Shared& sh = *reinterpret_cast<Shared*>(smem);
  const SampleRowDesc r = rows[blockIdx.x];
  const float* in = logits + static_cast<int64_t>(r.logits_row) * V;
  float* x = work + static_cast<int64_t>(blockIdx.x) * V;
  uint64_t* w = weights + static_cast<int64_t>(blockIdx.x) * V;
  SampleResultDesc& res = out[blockIdx.x];

  for (int i = threadIdx.x; i < V; i += kThreads) x[i] = in[i];
  __syncthreads();
  for (int kind = 0; kind < 4; ++kind) {
    for (int e = r.edit_begin[kind] + threadIdx.x; e < r.edit_begin[kind + 1]; e += kThreads) {
      const SampleEditDesc d = edits[e];
      float& v = x[d.token];
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
  for (int i = threadIdx.x; i < V; i += kThreads) {
    const float v = x[i];
    if (isnan(v)) nan = 1;
    else if (best.i < 0 || v > best.v) best = {v, i};
  }
  const Best top = cub::BlockReduce<Best, kThreads>(sh.cub.best).Reduce(best, BestOp());
  if (threadIdx.x == 0) sh.best = top;
  __syncthreads();
  const int any_nan = cub::BlockReduce<int, kThreads>(sh.cub.i32).Sum(nan);
  if (threadIdx.x == 0) sh.i32 = any_nan;
  __syncthreads();
  const float max_logit = sh.best.v;
  int token = sh.best.i;
  if (sh.i32 || !(max_logit > -INFINITY) || token < 0) {
    if (threadIdx.x == 0) {
      res.token = -1;
      res.status = sh.i32 ? kSampleNaN : kSampleAllExcluded;
      res.logprob = 0;
      res.num_top = 0;
    }
    return;
  }

  if (!(r.flags & kSampleGreedy)) {
    for (int i = threadIdx.x; i < V; i += kThreads) w[i] = draw_weight(x[i], max_logit, r.temperature);
    __syncthreads();
    uint32_t low = 0;
    if (r.top_k > 0) {
      int finite = 0;
      for (int i = threadIdx.x; i < V; i += kThreads) finite += x[i] > -INFINITY;
      const int n = cub::BlockReduce<int, kThreads>(sh.cub.i32).Sum(finite);
      if (threadIdx.x == 0) sh.i32 = n;
      __syncthreads();
      if (r.top_k < sh.i32) low = radix_low<false>(x, w, V, 0, r.top_k, 0, 0.0, sh);
    }
    if (r.top_p < 1.0) {
      uint64_t part = 0;
      for (int i = threadIdx.x; i < V; i += kThreads)
        if (x[i] > -INFINITY && order_key(x[i]) >= low) part += w[i];
      const uint64_t total = cub::BlockReduce<uint64_t, kThreads>(sh.cub.u64).Sum(part);
      if (threadIdx.x == 0) sh.u64 = total;
      __syncthreads();
      const uint64_t t = sh.u64;
      __syncthreads();
      low = radix_low<true>(x, w, V, low, 0, t, r.top_p, sh);
    }
    // The draw: chunk sums in id order, their exclusive scan, then the chunk holding the target.
    const int chunk = (V + kThreads - 1) / kThreads;
    const int begin = min(V, static_cast<int>(threadIdx.x) * chunk), end = min(V, begin + chunk);
    uint64_t sum = 0;
    for (int i = begin; i < end; ++i)
      if (kept(x[i], w[i], low, r.min_p)) sum += w[i];
    uint64_t excl = 0, total = 0;
    cub::BlockScan<uint64_t, kThreads>(sh.cub.scan).ExclusiveSum(sum, excl, total);
    if (threadIdx.x == 0) sh.i32 = -1;
    __syncthreads();
    const uint64_t target = draw_target(keyed_uniform(r.seed, r.index, r.position), total);
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
    token = sh.i32 >= 0 ? sh.i32 : token;
  }

  if (threadIdx.x == 0) {
    res.token = token;
    res.status = kSampleOk;
    res.logprob = 0;
    res.num_top = 0;
  }
  if (!(r.flags & kSampleLogprobs)) return;
  double s = 0;
  for (int i = threadIdx.x; i < V; i += kThreads) s += exp(static_cast<double>(x[i] - max_logit));
  const double sum_exp = cub::BlockReduce<double, kThreads>(sh.cub.f64).Sum(s);
  if (threadIdx.x == 0) sh.f64 = max_logit + log(sum_exp);
  __syncthreads();
  const double log_z = sh.f64;
  if (threadIdx.x == 0) res.logprob = static_cast<float>(x[token] - log_z);
  // Top logprobs: repeated argmax, each below the previous pick in (logit desc, id asc) order.
  const int k = min(r.top_logprobs, min(V, kSampleTopLogprobs));
  float prev_v = INFINITY;
  int prev_i = -1;
  for (int j = 0; j < k; ++j) {
    Best b{-INFINITY, -1};
    for (int i = threadIdx.x; i < V; i += kThreads) {
      const float v = x[i];
      if (v > prev_v || (v == prev_v && i <= prev_i)) continue;
      if (b.i < 0 || v > b.v) b = {v, i};
    }
    __syncthreads();
    const Best pick = cub::BlockReduce<Best, kThreads>(sh.cub.best).Reduce(b, BestOp());
    if (threadIdx.x == 0) sh.best = pick;
    __syncthreads();
    prev_v = sh.best.v;
    prev_i = sh.best.i;
    if (threadIdx.x == 0) {
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
  sample_kernel<<<num_rows, kThreads, smem, static_cast<cudaStream_t>(stream)>>>(
      logits, static_cast<int>(vocab), rows, edits, work, weights, out);
  return cuda_status(cudaGetLastError(), "sample_kernel launch");
}

}  // namespace di::kernels::cuda
