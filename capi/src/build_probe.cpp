// Probes the build's and the machine's capabilities. Never throws.
#include "capi/src/build_probe.h"

#include <thread>

#include "engine/backend/loader.h"

namespace di::capi {

bool built_with_cuda() {
#ifdef DI_HAVE_CUDA_BACKEND
  return true;
#else
  return false;
#endif
}

int32_t cuda_device_count() { return di::engine::backend::cuda_state().devices; }

int32_t cpu_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int32_t>(n);
}

nlohmann::json backends_json() { return di::engine::backend::backends_json(); }

}  // namespace di::capi
