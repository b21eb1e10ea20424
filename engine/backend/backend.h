// The interface between the core (libdeepinfer.so, CPU only) and a device backend built as its
// own shared object (libdeepinfer_cuda.so), loaded at run time by loader.cpp. Both sides are
// built from one tree by one compiler, so C++ types may cross; the loader still refuses a
// backend whose kBackendAbi or version differs from its own. Nothing here may throw across the
// boundary: the backend turns every exception into a Status.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/model/model.h"

namespace di::engine::backend {

// Bumped whenever DeviceBackend, Model, ModelOptions or anything they reach changes layout.
constexpr uint32_t kBackendAbi = 2;

struct DeviceBackend {
  uint32_t abi;         // kBackendAbi of the backend's build
  const char* version;  // DI_BACKEND_VERSION of the backend's build
  const char* name;     // "cuda"
  // Visible devices; 0 with *why set when there are none (no driver, no GPU, ...).
  int32_t (*device_count)(std::string* why);
  // Whether config.json's model_type has a path on this device.
  bool (*supports)(const std::string& model_type);
  // Loads model_dir on the device (options.device is this backend's name).
  Result<std::unique_ptr<Model>> (*create)(const std::string& model_type, const std::string& model_dir,
                                           const nlohmann::json& config, const ModelOptions& options);
};

}  // namespace di::engine::backend

// The one symbol a CUDA backend exports (its version script hides every other).
extern "C" const di::engine::backend::DeviceBackend* di_backend_cuda_v1();
