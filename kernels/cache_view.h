// CacheView: where the entries of one cache group of one sequence live, whichever way the group
// is stored (token blocks of a paged cache, compressed entries in the block of their last token,
// or one contiguous slot). The engine describes a group with it (SequenceCache::paged_view) and
// device kernels take it as an argument; the address rule below is the one both follow. Plain
// data, so CPU-only code includes it too; the device form of the rule is for nvcc alone.
#pragma once

#include <cstdint>

namespace di::kernels {

// Entry i of layer l lives in block b = ((i + 1) * compress_rate - 1) / block_size (the block of
// its last token; compress_rate 1 for one entry per token or a slot), at index
// i - floor(b * block_size / compress_rate) inside it:
//   base + l * layer_stride + block_ids[b] * block_stride + in_block * entry_bytes.
// A group kept in one contiguous run per layer (a per-sequence slot) is one block: block_ids = {0}.
struct CacheView {
  uint8_t* base = nullptr;  // device memory when on_device, else host memory
  int64_t layer_stride = 0;
  int64_t block_stride = 0;
  int64_t entry_bytes = 0;
  int32_t block_size = 1;
  int32_t compress_rate = 1;
  // A host array where SequenceCache::paged_view fills the view (the sequence's block table); a
  // device array (the step's uploaded copy of it) in a view that a kernel reads.
  const int32_t* block_ids = nullptr;
  int64_t num_blocks = 0;  // entries of block_ids
  bool on_device = false;  // base is device memory (the model's CacheMemory)
};

#ifdef __CUDACC__
// Entry i of `layer` as a T*. 32-bit index math (entry indices stay far below 2^31) with a shift
// for power-of-two blocks: kernels call this per key, and 64-bit division is a long software
// routine on the GPU.
template <typename T = float>
__device__ __forceinline__ T* cache_entry(const CacheView& v, int64_t layer, int64_t i) {
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
  return reinterpret_cast<T*>(v.base + layer * v.layer_stride + int64_t{v.block_ids[block]} * v.block_stride +
                              int64_t{e - first} * v.entry_bytes);
}
#endif

}  // namespace di::kernels
