// What one deepseek_v4 layer needs to know about the sequence it is running: its new tokens,
// their first position, and where its cache groups live (the model's whole decoding state).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model.h"

namespace di::engine::deepseek_v4 {

// Indices of the cache groups the model declares (-1 when the config has no such layer).
struct CacheLayout {
  int32_t swa_kv = -1;          // sliding ring of K=V rows, every layer
  int32_t csa_kv = -1;          // CSA compressed K=V entries
  int32_t csa_index_keys = -1;  // CSA indexer keys
  int32_t csa_state = -1;       // CSA compressor + indexer raw rows of the last two windows
  int32_t hca_kv = -1;          // HCA compressed K=V entries
  int32_t hca_state = -1;       // HCA compressor raw rows of the current window
  std::vector<int32_t> type_layer;  // model layer -> its index among layers of its type
};

struct Chunk {
  const int32_t* tokens = nullptr;
  int64_t num_tokens = 0;
  int64_t start_pos = 0;
  SequenceCache* cache = nullptr;
};

inline float* cache_row(const Chunk& chunk, int32_t group, int32_t layer, int64_t index) {
  return static_cast<float*>(chunk.cache->entry(group, layer, index));
}

}  // namespace di::engine::deepseek_v4
