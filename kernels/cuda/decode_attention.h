// Split-KV paged attention for decode rows (one query token per tile): the keys of each row
// are cut into `splits` chunks handled by separate blocks (so a batch-1 step still fills the
// GPU), each block leaves a partial softmax (max, sum, unnormalised output) and a second kernel
// merges them. Same cache layout and contract as paged_attention.h for the rows it covers.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/paged_attention.h"

namespace di::kernels::cuda {

// True when this kernel handles `shape` (head_dim below 32 or a multiple of 32 up to 256, at
// most 8 query heads per kv head).
bool decode_attention_supports(const AttentionShape& shape);

// Chunks per row for `num_tiles` rows whose longest context is `max_context` keys.
int32_t decode_attention_splits(int32_t num_tiles, int64_t max_context, const AttentionShape& shape);

// Bytes of fp32 workspace the launch needs.
int64_t decode_attention_workspace_bytes(int32_t num_tiles, int32_t splits, const AttentionShape& shape);

// tiles: one row each (num_rows == 1). workspace: decode_attention_workspace_bytes on the device.
// chunk_keys: keys per split; 0 cuts max_context into `splits` equal chunks. A fixed chunk_keys
// (splits * chunk_keys >= max_context) makes a row's reduction order depend on its own context
// alone: chunk i always covers keys [i * chunk_keys, (i + 1) * chunk_keys), chunks past the
// row's context are empty and the merge skips them (the batch-invariant mode).
Status decode_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                        int32_t splits, int64_t max_context, const CacheView* seqs, int32_t layer,
                        const AttentionShape& shape, void* workspace, DType dtype, void* stream,
                        int64_t chunk_keys = 0);

}  // namespace di::kernels::cuda
