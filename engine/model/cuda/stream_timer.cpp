// StreamTimer: see stream_timer.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/stream_timer.h"

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

StreamTimer::~StreamTimer() {
  if (begin_) cudaEventDestroy(static_cast<cudaEvent_t>(begin_));
  if (end_) cudaEventDestroy(static_cast<cudaEvent_t>(end_));
}

Status StreamTimer::start(void* stream) {
  for (void** e : {&begin_, &end_})
    if (!*e) {
      cudaEvent_t made = nullptr;
      DI_RETURN_IF_ERROR(kc::cuda_status(cudaEventCreate(&made), "cudaEventCreate (stream timer)"));
      *e = made;
    }
  stopped_ = false;
  DI_RETURN_IF_ERROR(kc::cuda_status(
      cudaEventRecord(static_cast<cudaEvent_t>(begin_), static_cast<cudaStream_t>(stream)), "cudaEventRecord"));
  started_ = true;
  return Status::ok();
}

Status StreamTimer::stop(void* stream) {
  if (!started_) return Status::state("StreamTimer: stop before start");
  DI_RETURN_IF_ERROR(kc::cuda_status(
      cudaEventRecord(static_cast<cudaEvent_t>(end_), static_cast<cudaStream_t>(stream)), "cudaEventRecord"));
  stopped_ = true;
  return Status::ok();
}

double StreamTimer::seconds() const {
  if (!started_ || !stopped_) return 0;
  float ms = 0;
  if (cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(begin_), static_cast<cudaEvent_t>(end_)) != cudaSuccess) {
    cudaGetLastError();  // not ready or not recorded: not a sticky error for the next call
    return 0;
  }
  return ms > 0 ? ms * 1e-3 : 0;
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
