// What this build and this machine can do, for di_build_info and di_engine_info. Kept apart
// from core.cpp so the backend loader (engine/backend) is asked in one place.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace di::capi {

// This build made a CUDA backend (libdeepinfer_cuda.so); whether it loads is backends_json's.
bool built_with_cuda();
// Number of CUDA devices the loaded backend sees (0 when it did not load or sees none).
int32_t cuda_device_count();
int32_t cpu_thread_count();
// Every backend, whether it is available and, when not, why (loads the CUDA backend once).
nlohmann::json backends_json();

}  // namespace di::capi
