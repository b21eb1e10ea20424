// What the split-KV (flash-decoding) attention kernels share: how many key ranges a launch splits
// into, and the merge of the ranges' partial results. Each range of one (row, head) writes
// [running max m, running sum l, `width` unnormalised output values]; the merge rescales them to
// their common max and normalises. Included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/device.h"

namespace di::kernels::cuda {

// The most ranges a merge takes (its weights live in shared memory).
inline constexpr int kMaxKvSplits = 256;
// Channels per merge block: a merge grid gets (width + kMergeChannels - 1) / kMergeChannels
// blocks per (row, head) along z.
inline constexpr int kMergeChannels = 128;
// Threads per merge block: four for each of its channels, so a channel's ranges are summed four
// ways at once (a merge over a hundred ranges is latency, not bandwidth).
inline constexpr int kMergeThreads = 4 * kMergeChannels;

// Ranges per row for a launch of `blocks` blocks without splitting: enough for two blocks per SM,
// no more than `max_ranges` (a range shorter than a key tile costs more to merge than it saves)
// and in [1, cap].
inline int32_t kv_splits_for(int64_t blocks, int64_t max_ranges, int32_t cap) {
  const int64_t want = (2 * int64_t{device_sm_count()} + blocks - 1) / blocks;
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(want, max_ranges), 1, cap));
}

// Merges `splits` (<= kMaxKvSplits) ranges of one (row, head) into `out` (`width` floats); every
// thread of the block calls it (blockDim.x a multiple of 32, at most kMergeThreads). The first range's entry is at
// `part`, each next one `stride` floats on. `sink`: a logit that joins the softmax without a
// value (-INFINITY: none). An empty range (l = 0) weighs nothing; a row where nothing weighs gets
// zeros. [c_begin, c_end) picks the channels this block writes (default: all), so a merge can
// spread over blocks. The ranges' stats are read by one thread each (not by every thread in turn): with a
// hundred ranges that serial walk was most of a merge.
__device__ inline void merge_kv_splits(const float* part, int64_t stride, int splits, int width, float sink,
                                       float* out, int c_begin = 0, int c_end = -1) {
  __shared__ float weight[kMaxKvSplits];
  __shared__ float red[32];
  __shared__ float total[2];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  float mx = -INFINITY;
  for (int s = threadIdx.x; s < splits; s += blockDim.x)
    if (part[s * stride + 1] > 0.f) mx = fmaxf(mx, part[s * stride]);
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  if (lane == 0) red[warp] = mx;
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = sink;
    for (int w = 0; w < warps; ++w) m = fmaxf(m, red[w]);
    total[0] = m;
  }
  __syncthreads();
  mx = total[0];
  float denom = 0.f;
  for (int s = threadIdx.x; s < splits; s += blockDim.x) {
    const float l = part[s * stride + 1];
    const float wgt = l > 0.f ? expf(part[s * stride] - mx) : 0.f;
    weight[s] = wgt;
    denom += l * wgt;
  }
  for (int o = 16; o > 0; o >>= 1) denom += __shfl_xor_sync(0xffffffffu, denom, o);
  __syncthreads();  // red[] is read above
  if (lane == 0) red[warp] = denom;
  __syncthreads();
  if (threadIdx.x == 0) {
    float d = sink > -INFINITY ? expf(sink - mx) : 0.f;
    for (int w = 0; w < warps; ++w) d += red[w];
    total[1] = d;
  }
  __syncthreads();
  denom = total[1];
  if (c_end < 0) c_end = width;
  // Threads beyond the channels take other ranges: group g of `groups` sums ranges g, g + groups,
  // ..., four loads in flight each, and the groups' sums are added in group order.
  const int span = c_end - c_begin;
  if (span <= 0) return;
  const int piece = min(span, static_cast<int>(blockDim.x)), groups = static_cast<int>(blockDim.x) / piece;
  const int group = static_cast<int>(threadIdx.x) / piece, lane_c = static_cast<int>(threadIdx.x) % piece;
  __shared__ float sums[kMergeThreads];
  for (int c0 = c_begin; c0 < c_end; c0 += piece) {
    const int c = c0 + lane_c;
    const bool active = group < groups && c < c_end;
    float v[4] = {0.f, 0.f, 0.f, 0.f};  // independent sums: four loads in flight
    if (active) {
      int s = group;
      for (; s + 3 * groups < splits; s += 4 * groups) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int r = s + u * groups;
          if (weight[r] > 0.f) v[u] += weight[r] * part[r * stride + 2 + c];  // empty ranges: unset
        }
      }
      for (; s < splits; s += groups)
        if (weight[s] > 0.f) v[0] += weight[s] * part[s * stride + 2 + c];
    }
    const float mine = (v[0] + v[1]) + (v[2] + v[3]);
    if (groups == 1) {  // uniform over the block
      if (active) out[c] = denom > 0.f ? mine / denom : 0.f;
      continue;
    }
    __syncthreads();  // sums[] of the previous piece is read
    sums[threadIdx.x] = mine;
    __syncthreads();
    if (group == 0 && c < c_end) {
      float t = 0.f;
      for (int g = 0; g < groups; ++g) t += sums[g * piece + lane_c];
      out[c] = denom > 0.f ? t / denom : 0.f;
    }
  }
}

}  // namespace di::kernels::cuda
