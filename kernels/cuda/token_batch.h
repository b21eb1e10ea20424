// TokenBatch: where each row of a forward belongs (its sequence, position and token id) and each
// sequence's span of rows and cache views, as device arrays that one upload fills. Kernels that
// touch per-sequence state (windows, rings, compressed entries) find everything here, so one
// launch covers every sequence of a step, and a captured graph replays with new contents in the
// same buffers. Plain data for the host; lookups for device code.
#pragma once

#include <cstdint>

#include "kernels/cache_view.h"

namespace di::kernels::cuda {

struct TokenBatch {
  int32_t num_tokens = 0;  // activation rows (a padded decode graph counts its padding rows)
  int32_t num_seqs = 0;
  int32_t num_groups = 0;            // cache groups per sequence in `views`
  const int32_t* ids = nullptr;      // [num_tokens] token ids (0 on padding rows)
  const int32_t* seq = nullptr;      // [num_tokens] sequence of the row; -1: padding, writes nothing
  const int32_t* pos = nullptr;      // [num_tokens] absolute position
  const int32_t* seq_start = nullptr;  // [num_seqs] position of the sequence's first new token
  const int32_t* seq_end = nullptr;    // [num_seqs] start + new tokens
  const int32_t* seq_row0 = nullptr;   // [num_seqs] row of its first new token
  const CacheView* views = nullptr;    // [num_seqs * num_groups]
};

#ifdef __CUDACC__
__device__ __forceinline__ const CacheView& seq_view(const TokenBatch& b, int32_t seq, int32_t group) {
  return b.views[static_cast<int64_t>(seq) * b.num_groups + group];
}
#endif

}  // namespace di::kernels::cuda
