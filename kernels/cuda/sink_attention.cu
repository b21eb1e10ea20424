// sink_attention: see sink_attention.h. One block per (token, head): a warp per key computes the
// logits into scratch, the block takes max and sum, then each thread sums p * v over the keys for
// its channels. Straightforward and exact in fp32; tiling and tensor cores come later.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/sink_attention.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// The K=V row of key j for token i (window keys first, then compressed entries).
__device__ __forceinline__ const float* key_row(const SinkAttentionArgs& a, int64_t i, int64_t lo, int64_t nw,
                                                int64_t j) {
  if (j < nw) {
    const int64_t pos = lo + j;
    if (pos >= a.start_pos) return a.kv + (pos - a.start_pos) * a.head_dim;
    return cache_entry(a.window_cache, a.window_layer, pos % a.window);
  }
  const int64_t c = j - nw;
  const int64_t e = a.selected ? a.selected[i * a.selected_stride + c] : c;
  return cache_entry(a.entries, a.entry_layer, e);
}

__global__ void sink_attention_kernel(SinkAttentionArgs a) {
  extern __shared__ float qs[];  // [head_dim]
  const int64_t i = blockIdx.x / a.num_heads;
  const int32_t h = blockIdx.x % a.num_heads;
  const int64_t p = a.start_pos + i;
  const int64_t lo = p - a.window + 1 > 0 ? p - a.window + 1 : 0;
  const int64_t nw = p - lo + 1;
  int64_t nc = 0;
  if (a.selected) {
    nc = a.selected_count[i];
  } else if (a.compress_rate > 0) {
    nc = (p + 1) / a.compress_rate;
  }
  const int64_t nk = nw + nc;
  const int hd = a.head_dim;
  const float* q = a.q + (i * a.num_heads + h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = q[d];
  __syncthreads();
  float* logits = a.scratch + blockIdx.x * a.max_keys;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t j = warp; j < nk; j += warps) {
    const float* k = key_row(a, i, lo, nw, j);
    float acc = 0.f;
    for (int d = lane; d < hd; d += 32) acc += qs[d] * k[d];
    acc = warp_sum(acc);
    if (lane == 0) logits[j] = acc * a.scale;
  }
  __syncthreads();
  const float sink = a.sinks ? a.sinks[h] : -INFINITY;  // no sinks: a logit of -inf adds nothing
  float mx = sink;
  for (int64_t j = threadIdx.x; j < nk; j += blockDim.x) mx = fmaxf(mx, logits[j]);
  mx = block_max(mx);
  float part = 0.f;
  for (int64_t j = threadIdx.x; j < nk; j += blockDim.x) {
    const float e = expf(logits[j] - mx);
    logits[j] = e;
    part += e;
  }
  const float sum = block_sum(part) + expf(sink - mx);  // block_sum syncs: logits are all written
  float* o = a.out + (i * a.num_heads + h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.f;
    for (int64_t j = 0; j < nk; ++j) acc += (logits[j] / sum) * key_row(a, i, lo, nw, j)[d];
    o[d] = acc;
  }
}

}  // namespace

Status sink_attention(const SinkAttentionArgs& a, void* stream) {
  if (a.num_tokens <= 0) return Status::ok();
  if (a.head_dim <= 0 || a.num_heads <= 0 || a.window <= 0)
    return Status::invalid_argument("sink_attention: head_dim, num_heads and window must be > 0");
  const int64_t blocks = a.num_tokens * a.num_heads;
  sink_attention_kernel<<<blocks, kThreads, a.head_dim * sizeof(float), as_stream(stream)>>>(a);
  return launch_status("sink_attention");
}

}  // namespace di::kernels::cuda
