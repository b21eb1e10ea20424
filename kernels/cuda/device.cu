// CUDA device discovery and error translation.
#include "kernels/cuda/device.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

namespace di::kernels::cuda {

int32_t device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error so later probes start clean
    return 0;
  }
  return n;
}

int32_t device_sm_count() {
  static const int32_t sms = [] {
    int dev = 0, n = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    return n > 0 ? n : 1;
  }();
  return sms;
}

bool pdl_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("DEEPINFER_DISABLE_PDL");
    return !(v && std::string(v) == "1");
  }();
  return on;
}

Status cuda_status(int error, const char* what) {
  if (error == cudaSuccess) return Status::ok();
  const auto e = static_cast<cudaError_t>(error);
  return Status::device(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                        cudaGetErrorString(e));
}

}  // namespace di::kernels::cuda
