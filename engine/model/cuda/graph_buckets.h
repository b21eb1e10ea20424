// Graph buckets: how a CUDA model pads a decode-sized step to the key of a graph it may replay,
// so that one capture serves many steps: its rows (or sequences) up to the smallest bucket that
// holds them, its context up to a multiple of kContextBucket. It captures nothing (GraphCache
// does). CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>

namespace di::engine::cuda {

inline constexpr int64_t kContextBucket = 256;
inline constexpr int32_t kGraphBuckets[] = {1,  2,  4,  8,   12,  16,  24,  32,  40, 48,
                                            64, 80, 96, 112, 128, 160, 192, 224, 256};

// The smallest bucket >= n; -1 when n is above them all (the step runs eagerly).
inline int32_t graph_bucket(int64_t n) {
  for (int32_t b : kGraphBuckets)
    if (b >= n) return b;
  return -1;
}

// A context of `max_end` tokens rounded up to its bucket (chunks past a row's own context are
// empty and skipped).
inline int64_t context_bucket(int64_t max_end) {
  return (max_end + kContextBucket - 1) / kContextBucket * kContextBucket;
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
