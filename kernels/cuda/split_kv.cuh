// What the split-KV (flash-decoding) attention kernels share: how many key ranges a launch splits
// into, and the merge of the ranges' partial results. Each range of one (row, head) writes
// [running max m, running sum l, `width` unnormalised output values]; the merge rescales them to
// their common max and normalises. Included only by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace di::kernels::cuda {

// The most ranges a merge takes (its weights live in shared memory).
inline constexpr int kMaxKvSplits = 256;

// Streaming multiprocessors of the current device, read once per process (1 when unknown).
inline int32_t device_sm_count() {
  static const int32_t sms = [] {
    int dev = 0, n = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    return n > 0 ? n : 1;
  }();
  return sms;
}

// Ranges per row for a launch of `blocks` blocks without splitting: enough for two blocks per SM,
// no more than `max_ranges` (a range shorter than a key tile costs more to merge than it saves)
// and in [1, cap].
inline int32_t kv_splits_for(int64_t blocks, int64_t max_ranges, int32_t cap) {
  const int64_t want = (2 * int64_t{device_sm_count()} + blocks - 1) / blocks;
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(want, max_ranges), 1, cap));
}

// Merges `splits` (<= kMaxKvSplits) ranges of one (row, head) into `out` (`width` floats); every
// thread of the block calls it. The first range's entry is at `part`, each next one `stride`
// floats on. `sink`: a logit that joins the softmax without a value (-INFINITY: none). An empty
// range (l = 0) weighs nothing; a row where nothing weighs gets zeros.
__device__ inline void merge_kv_splits(const float* part, int64_t stride, int splits, int width, float sink,
                                       float* out) {
  __shared__ float weight[kMaxKvSplits];
  float mx = sink;
  for (int s = 0; s < splits; ++s)
    if (part[s * stride + 1] > 0.f) mx = fmaxf(mx, part[s * stride]);
  float denom = sink > -INFINITY ? expf(sink - mx) : 0.f;
  for (int s = 0; s < splits; ++s) {
    const float l = part[s * stride + 1];
    if (l > 0.f) denom += l * expf(part[s * stride] - mx);
  }
  for (int s = threadIdx.x; s < splits; s += blockDim.x)
    weight[s] = part[s * stride + 1] > 0.f ? expf(part[s * stride] - mx) : 0.f;
  __syncthreads();
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    float v = 0.f;
    for (int s = 0; s < splits; ++s)
      if (weight[s] > 0.f) v += weight[s] * part[s * stride + 2 + c];
    out[c] = denom > 0.f ? v / denom : 0.f;
  }
}

}  // namespace di::kernels::cuda
