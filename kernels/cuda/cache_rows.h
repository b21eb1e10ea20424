// Copies rows of fp32 activations into cache entries (a sliding ring, compressed entries, raw
// compressor state) addressed through a CacheView. Host launcher on device pointers; knows no
// model: the caller says which entry each row goes to.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/cache_view.h"

namespace di::kernels::cuda {

// For r < rows: entry e = first_index + r (e % ring when ring > 0) of `layer` gets
// src[r * src_stride .. + cols] at `byte_offset` bytes into the entry. fp32 throughout.
Status write_cache_rows(const float* src, int64_t src_stride, int64_t rows, int64_t cols, const CacheView& view,
                        int32_t layer, int64_t first_index, int64_t ring, int64_t byte_offset, void* stream);

}  // namespace di::kernels::cuda
