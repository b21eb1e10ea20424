// What this build and this machine can do, for di_build_info. Kept apart from core.cpp so the
// CUDA probe is the only place that knows whether kernels/cuda was built.
#pragma once

#include <cstdint>

namespace di::capi {

bool built_with_cuda();
// Number of CUDA devices visible now (0 without CUDA, without a driver, or without a GPU).
int32_t cuda_device_count();
int32_t cpu_thread_count();

}  // namespace di::capi
