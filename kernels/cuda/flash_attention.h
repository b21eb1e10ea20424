// Tensor-core paged causal attention for bf16 prefill: one block per (64 consecutive query
// tokens of one sequence, one query head), keys in tiles of 64 through shared memory, S = Q K^T
// and O += P V on the tensor cores (WMMA, bf16 operands, fp32 accumulators), online softmax in
// fp32. Reads the same paged cache and tiles as paged_attention.h; writes disjoint rows.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/paged_attention.h"

namespace di::kernels::cuda {

// Query tokens per tile of this kernel.
constexpr int32_t kFlashTileTokens = 64;

// True when this kernel handles `shape` in `dtype` (bf16, head_dim a multiple of 16, <= 256).
bool flash_attention_supports(const AttentionShape& shape, DType dtype);

// Appends tiles of up to kFlashTileTokens tokens for a sequence's new tokens.
void append_flash_tiles(int32_t seq, int32_t row0, int32_t pos0, int32_t num_tokens,
                        std::vector<AttentionTile>& tiles);

// Same contract as paged_attention (q rows q_stride apart, out [rows, heads * head_dim]) for
// the rows the tiles cover.
Status flash_attention(const void* q, int64_t q_stride, void* out, const AttentionTile* tiles, int32_t num_tiles,
                       const CacheView* seqs, int32_t layer, const AttentionShape& shape, void* stream);

}  // namespace di::kernels::cuda
