// Probes the build's and the machine's capabilities. Never throws.
#include "capi/src/build_probe.h"

#include <thread>

#ifdef DI_WITH_CUDA
#include "kernels/cuda/device.h"
#endif

namespace di::capi {

bool built_with_cuda() {
#ifdef DI_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int32_t cuda_device_count() {
#ifdef DI_WITH_CUDA
  return di::kernels::cuda::device_count();
#else
  return 0;
#endif
}

int32_t cpu_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int32_t>(n);
}

}  // namespace di::capi
