// Finds and loads device backends (libdeepinfer_cuda.so) once per process, like ggml's backend
// registry: a host without CUDA runs the core alone, and every caller can ask why a backend is
// not there. Knows no model family; registry.cpp asks it for a backend by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/backend/backend.h"

namespace di::engine::backend {

struct BackendState {
  std::string name;      // "cuda"
  bool available = false;  // loaded and at least one device
  std::string library;   // the file that was loaded, or "" when none was
  int32_t devices = 0;
  std::string reason;    // why it is not available ("" when it is)
};

// The CUDA backend when it loaded and sees a device, else nullptr (cuda_state() says why).
// Thread-safe; the first call loads, later calls return the same answer.
const DeviceBackend* cuda_backend();
const BackendState& cuda_state();

// [{"name": "cpu", "available": true}, {"name": "cuda", "available": ..., "reason": ...}]
nlohmann::json backends_json();

}  // namespace di::engine::backend
