// KvCacheStats: a snapshot of the KV cache's occupancy and prefix-cache counters, as the cache
// manager reports it and the metrics publish it. Plain data; knows nothing of either.
#pragma once

#include <cstdint>

namespace di::engine {

struct KvCacheStats {
  int32_t num_blocks = 0;
  int32_t num_free_blocks = 0;
  int32_t num_cached_blocks = 0;  // free blocks that still hold a cached prefix
  int32_t num_slots = 0;
  int32_t num_checkpoints = 0;
  int64_t prefix_queries = 0;      // prompt tokens looked up
  int64_t prefix_hits = 0;         // prompt tokens served from the cache
};

}  // namespace di::engine
