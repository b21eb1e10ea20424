// PinnedBuffer: see pinned_buffer.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/pinned_buffer.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

PinnedBuffer::~PinnedBuffer() {
  if (p_) cudaFreeHost(p_);
}

Status PinnedBuffer::grow(int64_t bytes, const char* what) {
  if (bytes <= bytes_) return Status::ok();
  const int64_t want = std::max(bytes, bytes_ * 3 / 2);
  void* p = nullptr;
  const std::string where = std::string("cudaMallocHost (") + what + ")";
  DI_RETURN_IF_ERROR(kc::cuda_status(cudaMallocHost(&p, static_cast<size_t>(want)), where.c_str()));
  if (p_) cudaFreeHost(p_);
  p_ = static_cast<uint8_t*>(p);
  bytes_ = want;
  return Status::ok();
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
