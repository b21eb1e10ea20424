// Paged causal attention with grouped KV heads (GQA/MQA) for prefill and decode alike, and the
// write of new K/V into the paged cache. A cache entry is one token of one layer: [K | V], each
// [num_kv_heads * head_dim] of the model's dtype. Knows nothing of models or the engine; the
// caller describes each sequence's pages (a CacheView of one entry per token: compress_rate 1)
// and the work tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "kernels/cache_view.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// A block's share of the attention: `num_rows` consecutive new tokens of sequence `seq`, the
// first at batch row `row0` and absolute position `pos0`.
struct AttentionTile {
  int32_t seq = 0;
  int32_t row0 = 0;
  int32_t num_rows = 0;
  int32_t pos0 = 0;
};

struct AttentionShape {
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  float scale = 1.f;  // softmax scale
};

// Tokens per tile so that one block holds at most 64 query rows (tokens x heads per kv head).
int32_t attention_tile_tokens(const AttentionShape& shape);

// Appends the tiles for a sequence with `num_tokens` new tokens from `row0` / `pos0`.
void append_attention_tiles(const AttentionShape& shape, int32_t seq, int32_t row0, int32_t pos0,
                            int32_t num_tokens, std::vector<AttentionTile>& tiles);

// Writes K and V of each new token into its cache entry of `layer`. k and v: [rows, kv_heads *
// head_dim] rows `kv_stride` elements apart; row_seq[r] and positions[r] give its sequence and
// position; seqs[s] is sequence s's cache, its block_ids on the device. All arrays on the device.
Status write_paged_kv(const void* k, const void* v, int64_t kv_stride, int64_t rows, const int32_t* row_seq,
                      const int64_t* positions, const CacheView* seqs, int32_t layer, const AttentionShape& shape,
                      DType dtype, void* stream);

// out[r, h*hd .. ] = softmax(q_h . K^T * scale, causal) V over the sequence's cached entries
// 0..pos(r) of `layer` (which must already hold this step's tokens). q: rows `q_stride`
// elements apart; out: [rows, num_heads * head_dim] contiguous. tiles on the device.
Status paged_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                       const CacheView* seqs, int32_t layer, const AttentionShape& shape, DType dtype, void* stream);

}  // namespace di::kernels::cuda
