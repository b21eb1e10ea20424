// Workspace: one device buffer cut into a forward's activation arrays (fp32 arrays, then int32
// arrays, then a bf16 staging area), each 256-byte aligned. It only hands out addresses; which
// array is which, and how large, is the model's business. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine::cuda {

// Grows `buf` to hold `bytes` (to 1.5x at least, so slowly growing batches rarely reallocate);
// its old contents are not kept.
inline Status grow_buffer(kernels::cuda::DeviceBuffer& buf, int64_t bytes) {
  if (bytes <= buf.bytes()) return Status::ok();
  return buf.allocate(std::max(bytes, buf.bytes() * 3 / 2));
}

class Workspace {
 public:
  // Grows `buf` (grow_buffer) to hold arrays of `floats` fp32 and `ints` int32 elements and
  // `stage_bytes` more, then carves from its start.
  static Result<Workspace> carve(kernels::cuda::DeviceBuffer& buf, std::vector<int64_t> floats,
                                 std::vector<int64_t> ints, int64_t stage_bytes) {
    int64_t bytes = aligned(stage_bytes);
    for (int64_t n : floats) bytes += aligned(n * 4);
    for (int64_t n : ints) bytes += aligned(n * 4);
    DI_RETURN_IF_ERROR(grow_buffer(buf, bytes));
    return Workspace(buf.as<uint8_t>(), std::move(floats), std::move(ints));
  }

  // The next fp32 array, then (once those are taken) the next int32 one, in the order given.
  float* f32() { return take<float>(floats_[fi_++]); }
  int32_t* i32() { return take<int32_t>(ints_[ii_++]); }
  // What follows the arrays: the staging area.
  void* rest() const { return p_; }

 private:
  Workspace(uint8_t* p, std::vector<int64_t> floats, std::vector<int64_t> ints)
      : p_(p), floats_(std::move(floats)), ints_(std::move(ints)) {}
  static int64_t aligned(int64_t bytes) { return (bytes + 255) / 256 * 256; }
  template <typename T>
  T* take(int64_t count) {
    T* out = reinterpret_cast<T*>(p_);
    p_ += aligned(count * static_cast<int64_t>(sizeof(T)));
    return out;
  }

  uint8_t* p_;
  std::vector<int64_t> floats_, ints_;
  size_t fi_ = 0, ii_ = 0;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
