// One deepseek_v4 attention block: shared-KV MQA (one K=V head) with partial rope, learned
// per-head sinks, a sliding window over recent tokens plus, on CSA / HCA layers, compressed
// entries (all visible ones for HCA, the indexer's top-k for CSA), the inverse rope on the
// output and the grouped low-rank output projection. Reads and writes state only via the cache.
#pragma once

#include <cstdint>

#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/rope.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

struct Ropes {
  Rope main;      // sliding layers
  Rope compress;  // CSA / HCA layers, their compressors and the indexer
};

// h [num_tokens, hidden] (already input-normed) -> out [num_tokens, hidden]. `layer` past the
// main layers is MTP layer layer - num_hidden_layers (sliding attention, its own ring rows).
void attention_forward(const DeepseekV4Config& c, const LayerWeights& w, int32_t layer,
                       const Ropes& ropes, const CacheLayout& layout, const float* h,
                       const Chunk& chunk, float* out);

}  // namespace di::engine::deepseek_v4
