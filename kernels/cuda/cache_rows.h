// Copies rows of fp32 activations into cache entries (a sliding ring, compressed entries, raw
// compressor state) addressed through a CacheView. Host launcher on device pointers; knows no
// model: the caller says which entry each row goes to.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cache_view.h"
#include "kernels/cuda/dtype.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

// For r < rows: entry e = first_index + r (e % ring when ring > 0) of `layer` gets
// src[r * src_stride .. + cols] at `byte_offset` bytes into the entry. fp32 throughout.
Status write_cache_rows(const float* src, int64_t src_stride, int64_t rows, int64_t cols, const CacheView& view,
                        int32_t layer, int64_t first_index, int64_t ring, int64_t byte_offset, void* stream);

// For every row of `batch` among its sequence's last `ring` positions of this step (earlier rows
// would be overwritten within the step, and skipping them keeps each ring slot to one writer):
// src[row * src_stride .. + cols] goes to ring entry pos % ring of `layer` in cache group
// `group`, `byte_offset` bytes into the entry, as `cache_dtype` (bf16: rounded to nearest even).
// Padding rows write nothing.
Status write_ring_rows_varlen(const TokenBatch& batch, const float* src, int64_t src_stride, int64_t cols,
                              int32_t group, int32_t layer, int64_t ring, int64_t byte_offset, void* stream,
                              DType cache_dtype = DType::kF32);

}  // namespace di::kernels::cuda
