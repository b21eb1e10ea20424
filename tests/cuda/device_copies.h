// Host vectors to and from device buffers for the kernel tests. A failed copy is recorded as a
// test failure where it happens, so a test reads its inputs and outputs in one line each.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cache_view.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/token_batch.h"

namespace di::test {

// A device copy of `v` that lives as long as the returned buffer (one element at least, so an
// empty input still has an address to pass).
template <typename T>
kernels::cuda::DeviceBuffer upload(const std::vector<T>& v) {
  kernels::cuda::DeviceBuffer b;
  EXPECT_TRUE(b.allocate(static_cast<int64_t>(std::max<size_t>(1, v.size()) * sizeof(T))).is_ok());
  EXPECT_TRUE(kernels::cuda::copy_to_device(b.get(), v.data(), static_cast<int64_t>(v.size() * sizeof(T))).is_ok());
  return b;
}

// The first `n` elements of `b`.
template <typename T = float>
std::vector<T> download(const kernels::cuda::DeviceBuffer& b, size_t n) {
  std::vector<T> v(n);
  EXPECT_TRUE(kernels::cuda::copy_to_host(v.data(), b.get(), static_cast<int64_t>(n * sizeof(T))).is_ok());
  return v;
}

// A cache view of `entries` rows of `floats` floats each in `rows`, all in one block (`block`
// holds the block id 0 on the device).
inline kernels::CacheView one_block_view(const kernels::cuda::DeviceBuffer& rows, int64_t entries, int64_t floats,
                                         const kernels::cuda::DeviceBuffer& block) {
  kernels::CacheView v;
  v.base = rows.as<uint8_t>();
  v.block_size = static_cast<int32_t>(entries);
  v.block_stride = entries * floats * 4;
  v.layer_stride = v.block_stride;
  v.entry_bytes = floats * 4;
  v.block_ids = static_cast<const int32_t*>(block.get());
  return v;
}

// One sequence's step as the varlen kernels read it: the rows' sequence (-1: padding) and
// position, the sequence's first new position and row 0, `new_rows` new tokens, and its cache
// views (one per group). Holds the device arrays the TokenBatch points to.
struct OneSequenceBatch {
  OneSequenceBatch(const std::vector<int32_t>& seq, const std::vector<int32_t>& pos, int32_t start, int32_t new_rows,
                   const std::vector<kernels::CacheView>& views)
      : d_seq(upload(seq)),
        d_pos(upload(pos)),
        d_start(upload(std::vector<int32_t>{start})),
        d_end(upload(std::vector<int32_t>{start + new_rows})),
        d_row0(upload(std::vector<int32_t>{0})),
        d_views(upload(views)) {
    batch.num_tokens = static_cast<int32_t>(seq.size());
    batch.num_seqs = 1;
    batch.num_groups = static_cast<int32_t>(views.size());
    batch.seq = static_cast<const int32_t*>(d_seq.get());
    batch.pos = static_cast<const int32_t*>(d_pos.get());
    batch.seq_start = static_cast<const int32_t*>(d_start.get());
    batch.seq_end = static_cast<const int32_t*>(d_end.get());
    batch.seq_row0 = static_cast<const int32_t*>(d_row0.get());
    batch.views = static_cast<const kernels::CacheView*>(d_views.get());
  }
  kernels::cuda::DeviceBuffer d_seq, d_pos, d_start, d_end, d_row0, d_views;
  kernels::cuda::TokenBatch batch;
};

}  // namespace di::test
