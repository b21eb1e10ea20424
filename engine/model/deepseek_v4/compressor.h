// KV compression for CSA and HCA layers (DeepSeek-V4 paper §2.3): each window of `rate` tokens
// becomes one entry, a softmax-gated sum of the tokens' projections (CSA: over the previous
// window's Ca series and this window's Cb series), RMS-normalised and roped at the window's
// first position. Also the CSA lightning indexer that picks the top-k entries per query.
// State between forwards lives only in the cache (raw rows of the open windows).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/rope.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

// Where a compressor keeps its raw rows: entries of `group` for `layer`, at `offset` floats in.
struct CompressorState {
  int32_t group = -1;
  int32_t layer = -1;
  int64_t offset = 0;
};

// Emits the entries of every window that closes inside `chunk` into (entry_group, layer),
// reading `h` [num_tokens, hidden]; then saves the rows later windows still need.
void compress_chunk(const DeepseekV4Config& c, const CompressorWeights& w, const Rope& rope,
                    const float* h, const Chunk& chunk, int32_t entry_group, int32_t layer,
                    const CompressorState& state);

// The indexer's choice for each new token: the compressed entries (of those it may see) with
// the index_topk highest scores. q_residual [num_tokens, q_lora_rank], h [num_tokens, hidden].
std::vector<std::vector<int32_t>> indexer_select(const DeepseekV4Config& c,
                                                 const AttentionWeights& w, const Rope& rope,
                                                 const float* q_residual, const float* h,
                                                 const Chunk& chunk, int32_t key_group,
                                                 int32_t layer);

}  // namespace di::engine::deepseek_v4
