// The DeepSeek-V4 KV compressor's pooling on the GPU: each window of `rate` tokens that closes
// in this chunk becomes one entry, a per-channel softmax-gated sum of the tokens' projections
// (with overlap: over the previous window's Ca series and this window's Cb series). Rows before
// the chunk come from the raw-row ring the caller keeps in a cache. Norm, rope and the write of
// the entries are separate steps. fp32; knows no model.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/cache_view.h"

namespace di::kernels::cuda {

struct CompressArgs {
  const float* kv = nullptr;    // [num_tokens, width] this chunk's projections (width = 2 dim with overlap)
  const float* gate = nullptr;  // [num_tokens, width] gate logits
  const float* ape = nullptr;   // [rate, width] position bias added to the gate logits
  float* out = nullptr;         // [windows, dim]: entries of windows first_window, first_window + 1, ...
  int64_t num_tokens = 0;
  int64_t start_pos = 0;
  int32_t dim = 0;
  int32_t rate = 0;
  bool overlap = false;
  // Raw rows of positions before start_pos: entry p % ring of `state_layer`, kv at
  // state_offset bytes and gate right after it (width floats each), ring = (overlap ? 2 : 1) * rate.
  CacheView state;
  int32_t state_layer = 0;
  int64_t state_offset = 0;
};

// Windows closing in [start_pos, start_pos + num_tokens): first_window = start_pos / rate, count
// (start_pos + num_tokens) / rate - first_window.
Status compress_windows(const CompressArgs& args, void* stream);

}  // namespace di::kernels::cuda
