// The DeepSeek-V4 lightning indexer's choice on the GPU: for each new token, the index_topk
// compressed entries with the highest scores sum_h relu(q_h . key) * softmax_scale *
// (weight_h * weight_scale) among the entries whose window has closed by that token (all of
// them, in order, when there are at most topk). fp32 (or bf16 products: tensor_cores); keys
// through a CacheView.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

// For every row of a step: row r at position p sees entries 0..(p + 1) / rate - 1 of its
// sequence's keys (entry `key_layer` of group `key_group`). The selection keeps the topk highest
// scores, ties to the lower index, and lists them in index order (the attention over them is a
// sum: any fixed order serves, and index order reads the cache forward).
struct IndexerVarlenArgs {
  TokenBatch batch;
  const float* q = nullptr;        // [rows, heads, head_dim], roped
  const float* weights = nullptr;  // [rows, heads]
  int32_t key_group = 0;
  int32_t key_layer = 0;
  int32_t heads = 0;
  int32_t head_dim = 0;
  int32_t rate = 0;
  int32_t topk = 0;
  float softmax_scale = 1.f;
  float weight_scale = 1.f;
  float* scores = nullptr;      // scratch [rows, max_visible]
  int64_t max_visible = 0;      // at least (p + 1) / rate for every row
  int32_t* selected = nullptr;  // [rows, topk]: chosen entries, in index order
  int32_t* count = nullptr;     // [rows]
  // Scores from bf16 queries and keys on tensor cores (fp32 accumulation) when heads <= 64 and
  // head_dim is a multiple of 16 up to 256: the bf16 models' choice, not the fp32 or
  // batch-invariant ones'.
  bool tensor_cores = false;
};

Status indexer_topk_varlen(const IndexerVarlenArgs& args, void* stream);

}  // namespace di::kernels::cuda
