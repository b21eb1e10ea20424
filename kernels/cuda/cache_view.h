// CacheView: how a device kernel finds entry i of one layer of a cache group, whichever way the
// group is stored (token blocks of a paged cache, compressed entries in the block of their last
// token, or one contiguous slot). Plain data for the host; the address rule for device code.
#pragma once

#include <cstdint>

namespace di::kernels::cuda {

// Entry i of layer l lives in block b = ((i + 1) * compress_rate - 1) / block_size (the block of
// its last token; compress_rate 1 for one entry per token or a slot), at index
// i - floor(b * block_size / compress_rate) inside it:
//   base + l * layer_stride + block_ids[b] * block_stride + in_block * entry_bytes.
struct CacheView {
  uint64_t base = 0;  // device address
  int64_t layer_stride = 0;
  int64_t block_stride = 0;
  int64_t entry_bytes = 0;
  int32_t block_size = 1;
  int32_t compress_rate = 1;
  const int32_t* block_ids = nullptr;  // device array
};

#ifdef __CUDACC__
// 32-bit index math (entry indices stay far below 2^31) with a shift for power-of-two blocks:
// kernels call this per key, and 64-bit division is a long software routine on the GPU.
__device__ __forceinline__ float* cache_entry(const CacheView& v, int64_t layer, int64_t i) {
  const uint32_t bs = static_cast<uint32_t>(v.block_size), cr = static_cast<uint32_t>(v.compress_rate);
  const uint32_t e = static_cast<uint32_t>(i);
  uint32_t block, first;
  if (cr == 1) {
    block = (bs & (bs - 1)) == 0 ? e >> (__ffs(static_cast<int>(bs)) - 1) : e / bs;
    first = block * bs;
  } else {
    block = ((e + 1) * cr - 1) / bs;
    first = block * bs / cr;
  }
  return reinterpret_cast<float*>(v.base + layer * v.layer_stride + int64_t{v.block_ids[block]} * v.block_stride +
                                  int64_t{e - first} * v.entry_bytes);
}
#endif

}  // namespace di::kernels::cuda
