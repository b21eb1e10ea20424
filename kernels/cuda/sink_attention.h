// DeepSeek-V4 attention for one sequence's new tokens on the GPU: shared-KV MQA (one K=V head)
// with a learned per-head sink logit, over the token's sliding window (this chunk's K=V rows or
// the ring cache) followed by compressed entries (all visible ones, or an indexer's selection).
// fp32 activations and caches; knows the cache only through CacheViews.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cache_view.h"

namespace di::kernels::cuda {

struct SinkAttentionArgs {
  const float* q = nullptr;   // [num_tokens, num_heads, head_dim]
  const float* kv = nullptr;  // [num_tokens, head_dim]: this chunk's K=V rows
  const float* sinks = nullptr;  // [num_heads]; null: no sink (plain softmax, as MLA's latent MQA)
  float* out = nullptr;       // [num_tokens, num_heads, head_dim]
  float* scratch = nullptr;   // sink_attention_scratch_floats(...) floats
  int64_t num_tokens = 0;
  int64_t start_pos = 0;      // token i sits at start_pos + i
  int32_t num_heads = 0;
  int32_t head_dim = 0;
  float scale = 1.f;
  // Sliding window: positions max(0, p - window + 1)..p; those before start_pos come from the
  // ring `window_cache` (entry p % window of `window_layer`).
  int64_t window = 0;
  CacheView window_cache;
  int32_t window_layer = 0;
  // Compressed entries of `entry_layer` in `entries`: with compress_rate > 0 all entries
  // 0..(p + 1) / compress_rate - 1 (HCA); with `selected` the first selected_count[i] of
  // selected[i * selected_stride ..] (CSA); neither: none (sliding layers).
  CacheView entries;
  int32_t entry_layer = 0;
  int64_t compress_rate = 0;
  const int32_t* selected = nullptr;
  const int32_t* selected_count = nullptr;
  int64_t selected_stride = 0;
  int64_t max_keys = 0;  // an upper bound on keys per token (window + compressed)
};

// Floats of scratch the launch needs: one logit per (token, head, key).
inline int64_t sink_attention_scratch_floats(int64_t num_tokens, int32_t num_heads, int64_t max_keys) {
  return num_tokens * num_heads * max_keys;
}

// out = softmax([q.k * scale for each key] ++ [sink]) over the keys' values (K = V), the sink
// taking probability mass and adding no value.
Status sink_attention(const SinkAttentionArgs& args, void* stream);

}  // namespace di::kernels::cuda
