// PinnedBuffer: page-locked host memory that a stream copies to or from asynchronously (a step's
// packed inputs, the draws and flags that come back), grown on demand and freed with it. It holds
// bytes only; what they mean is its owner's business. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>

#include "base/status.h"

namespace di::engine::cuda {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // Room for `bytes` (to 1.5x at least, so slowly growing steps rarely reallocate); the old
  // contents are not kept. `what` names the buffer in the error.
  Status grow(int64_t bytes, const char* what);
  uint8_t* get() const { return p_; }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(p_); }
  int64_t bytes() const { return bytes_; }

 private:
  uint8_t* p_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
