// DeepSeek-V4 attention for every row of a step at once (varlen: prefill chunks and decode tokens
// of many sequences packed together): shared-KV MQA (one K=V head) with a learned per-head sink
// logit, over the row's sliding window (this step's K=V rows, or the sequence's ring cache for
// positions before the step) followed by compressed entries (all visible ones for HCA, the
// indexer's selection for CSA). fp32 activations and caches; an online softmax, so no scratch
// grows with the context. Knows sequences only through the TokenBatch. With `tensor_cores` the
// products run as bf16 mmas (fp32 accumulation) where the shape allows: the bf16 models' prefill.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

struct SinkAttentionVarlenArgs {
  TokenBatch batch;
  const float* q = nullptr;      // [rows, num_heads, head_dim]
  const float* kv = nullptr;     // [rows, head_dim]: this step's K=V rows
  const float* sinks = nullptr;  // [num_heads]; null: no sink
  float* out = nullptr;          // [rows, num_heads, head_dim]; padding rows get zeros
  int32_t num_heads = 0;
  int32_t head_dim = 0;          // at most 512
  float scale = 1.f;
  // Sliding window: positions max(0, p - window + 1)..p; those before the sequence's start come
  // from ring entry p % window of `window_layer` in cache group `window_group`.
  int32_t window = 0;
  int32_t window_group = 0;
  int32_t window_layer = 0;
  // Compressed entries of `entry_layer` in group `entry_group` (-1: none, sliding layers): with
  // `selected`, the first selected_count[row] of selected[row * selected_stride ..] (CSA);
  // without, all entries 0..(p + 1) / compress_rate - 1 (HCA).
  int32_t entry_group = -1;
  int32_t entry_layer = 0;
  int32_t compress_rate = 0;
  const int32_t* selected = nullptr;
  const int32_t* selected_count = nullptr;
  int32_t selected_stride = 0;
  // Key ranges per row (1..256), each reduced by its own block and merged after (flash-decoding's split
  // KV); 1 reduces in one pass. `partial` holds splits * rows * num_heads * (head_dim + 2) floats.
  int32_t splits = 1;
  float* partial = nullptr;
  // Q, K=V and the probabilities rounded to bf16 for tensor-core products, when splits is 1 and
  // head_dim is 64, 128, 256 or 512 (other shapes take the fp32 kernel): the bf16 models' choice,
  // not the fp32 or batch-invariant ones'.
  bool tensor_cores = false;
};

// Splits worth launching for `rows` rows of up to `max_keys` keys each on this device.
int32_t sink_attention_varlen_splits(int64_t rows, int32_t num_heads, int64_t max_keys);

inline int64_t sink_attention_varlen_partial_floats(int64_t rows, int32_t num_heads, int32_t head_dim,
                                                    int32_t splits) {
  return splits > 1 ? int64_t{splits} * rows * num_heads * (head_dim + 2) : 0;
}

// out = softmax([q.k * scale for each key] ++ [sink]) over the keys' values (K = V).
Status sink_attention_varlen(const SinkAttentionVarlenArgs& args, void* stream);

}  // namespace di::kernels::cuda
