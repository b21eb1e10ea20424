// The DeepSeek-V4 lightning indexer's choice on the GPU: for each new token, the index_topk
// compressed entries with the highest scores sum_h relu(q_h . key) * softmax_scale *
// (weight_h * weight_scale) among the entries whose window has closed by that token (all of
// them, in order, when there are at most topk). fp32; keys through a CacheView.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/cache_view.h"

namespace di::kernels::cuda {

struct IndexerArgs {
  const float* q = nullptr;        // [num_tokens, heads, head_dim], roped
  const float* weights = nullptr;  // [num_tokens, heads]
  CacheView keys;                  // index keys, [head_dim] floats per entry
  int32_t key_layer = 0;
  int64_t num_tokens = 0;
  int64_t start_pos = 0;
  int32_t heads = 0;
  int32_t head_dim = 0;
  int32_t rate = 0;   // token i sees entries 0..(start_pos + i + 1) / rate - 1
  int32_t topk = 0;
  float softmax_scale = 1.f;
  float weight_scale = 1.f;
  float* scores = nullptr;      // scratch [num_tokens, max_visible]
  int64_t max_visible = 0;      // (start_pos + num_tokens) / rate
  int32_t* selected = nullptr;  // [num_tokens, topk]: chosen entries, best first
  int32_t* count = nullptr;     // [num_tokens]: how many of a row are set
};

Status indexer_topk(const IndexerArgs& args, void* stream);

}  // namespace di::kernels::cuda
