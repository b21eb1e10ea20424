// Which keys a row of sink_attention_varlen attends to, and where each one's K=V row lives: what
// its CUDA-core and tensor-core kernels share. Included only by .cu files.
#pragma once

#include <cstdint>

#include "kernels/cache_view.h"
#include "kernels/cuda/sink_attention_varlen.h"

namespace di::kernels::cuda {

struct SinkRowKeys {
  int32_t seq, start, row0;
  int64_t pos, lo, num_window, num_keys;
};

__device__ __forceinline__ SinkRowKeys sink_row_keys(const SinkAttentionVarlenArgs& a, int64_t row) {
  SinkRowKeys k;
  k.seq = a.batch.seq[row];
  k.pos = a.batch.pos[row];
  k.start = k.seq >= 0 ? a.batch.seq_start[k.seq] : 0;
  k.row0 = k.seq >= 0 ? a.batch.seq_row0[k.seq] : 0;
  k.lo = k.pos - a.window + 1 > 0 ? k.pos - a.window + 1 : 0;
  k.num_window = k.pos - k.lo + 1;
  int64_t nc = 0;
  if (a.entry_group >= 0) nc = a.selected ? a.selected_count[row] : (k.pos + 1) / a.compress_rate;
  k.num_keys = k.num_window + nc;
  return k;
}

// The K=V row of key j of `row` (window keys first, then compressed entries).
__device__ __forceinline__ const float* sink_key_row(const SinkAttentionVarlenArgs& a, const SinkRowKeys& k,
                                                     int64_t row, int64_t j) {
  if (j < k.num_window) {
    const int64_t p = k.lo + j;
    if (p >= k.start) return a.kv + (k.row0 + p - k.start) * a.head_dim;
    return cache_entry(seq_view(a.batch, k.seq, a.window_group), a.window_layer, p % a.window);
  }
  const int64_t c = j - k.num_window;
  const int64_t e = a.selected ? a.selected[row * a.selected_stride + c] : c;
  return cache_entry(seq_view(a.batch, k.seq, a.entry_group), a.entry_layer, e);
}

}  // namespace di::kernels::cuda
