// upload_to_device: see weight_upload.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/weight_upload.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "kernels/cpu/threads.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

namespace {

constexpr int64_t kChunk = int64_t{16} << 20;
constexpr int64_t kStagedFrom = int64_t{1} << 20;  // below this a plain copy costs less than the hand-off

// The process's two staging buffers and the events that say when each is free again. Made at
// the first large upload and kept: pinned allocations cost milliseconds each, and a model has
// thousands of weights (never freed, as the CUDA context outlives no static object reliably).
struct Staging {
  std::mutex mu;  // one upload at a time uses the buffers
  void* host[2] = {nullptr, nullptr};
  cudaEvent_t free_again[2] = {nullptr, nullptr};
  bool ready = false;

  Status init() {
    if (ready) return Status::ok();
    for (int i = 0; i < 2; ++i) {
      DI_RETURN_IF_ERROR(kc::cuda_status(cudaMallocHost(&host[i], kChunk), "cudaMallocHost (weight staging)"));
      DI_RETURN_IF_ERROR(kc::cuda_status(cudaEventCreateWithFlags(&free_again[i], cudaEventDisableTiming),
                                         "cudaEventCreate (weight staging)"));
    }
    ready = true;
    return Status::ok();
  }
};

Staging& staging() {
  static Staging* s = new Staging;
  return *s;
}

}  // namespace

Status upload_to_device(void* dst, const void* src, int64_t bytes) {
  if (bytes < kStagedFrom) return kc::copy_to_device(dst, src, bytes);
  Staging& s = staging();
  std::lock_guard<std::mutex> lock(s.mu);
  DI_RETURN_IF_ERROR(s.init());
  const auto* from = static_cast<const uint8_t*>(src);
  auto* to = static_cast<uint8_t*>(dst);
  int b = 0;
  for (int64_t off = 0; off < bytes; off += kChunk, b ^= 1) {
    const int64_t n = std::min(kChunk, bytes - off);
    // The buffer's previous copy must have left it (an event never recorded is complete).
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaEventSynchronize(s.free_again[b]), "cudaEventSynchronize (weight staging)"));
    auto* stage = static_cast<uint8_t*>(s.host[b]);
    kernels::cpu::parallel_for(n, [&](int64_t begin, int64_t end) {
      std::memcpy(stage + begin, from + off + begin, static_cast<size_t>(end - begin));
    });
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaMemcpyAsync(to + off, stage, static_cast<size_t>(n), cudaMemcpyHostToDevice, 0),
                                       "cudaMemcpyAsync H2D (weight staging)"));
    DI_RETURN_IF_ERROR(kc::cuda_status(cudaEventRecord(s.free_again[b], 0), "cudaEventRecord (weight staging)"));
  }
  return kc::cuda_status(cudaStreamSynchronize(0), "cudaStreamSynchronize (weight staging)");
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
