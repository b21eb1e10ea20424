// The DeepSeek-V4 KV compressor for every row of a step at once: each row whose token closes a
// window of `rate` tokens turns that window into one entry (a per-channel softmax-gated sum of
// the window's projections; with overlap over the previous window's Ca series and this one's Cb
// series), RMS-normalises it, rotates its rope channels at the window's first position and
// writes it to the sequence's compressed cache. Rows before the step come from the raw-row ring
// that write_ring_rows_varlen keeps (run it after this). fp32; knows no model.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

struct CompressVarlenArgs {
  TokenBatch batch;
  const float* kv = nullptr;    // [rows, width] this step's projections (width = 2 dim with overlap)
  const float* gate = nullptr;  // [rows, width] gate logits
  int64_t row_stride = 0;       // between rows of kv and of gate; 0: width
  const float* ape = nullptr;   // [rate, width] position bias added to the gate logits
  const float* norm = nullptr;  // [dim] RMSNorm weight of the entries
  float eps = 1e-6f;
  int32_t dim = 0;              // at most 1024
  int32_t rate = 0;
  bool overlap = false;
  // Raw rows before the step: entry p % ring of `state_layer` in group `state_group`, kv at
  // `state_offset` bytes and gate right after it, ring = (overlap ? 2 : 1) * rate.
  int32_t state_group = 0;
  int32_t state_layer = 0;
  int64_t state_offset = 0;
  // Where entry w goes: entry w of `entry_layer` in group `entry_group`.
  int32_t entry_group = 0;
  int32_t entry_layer = 0;
  // Interleaved rope on the last rot_dim channels at position w * rate (inv_freq on the device).
  const float* inv_freq = nullptr;
  int32_t rot_dim = 0;
  float rope_scale = 1.f;
};

Status compress_windows_varlen(const CompressVarlenArgs& args, void* stream);

}  // namespace di::kernels::cuda
