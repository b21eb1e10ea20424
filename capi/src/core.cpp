// Versions, status names, error objects and di_free: the parts of the C ABI every other part
// uses. Nothing here may throw across the boundary.
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "api_guard.h"
#include "capi/src/build_probe.h"

namespace di::capi {

di_status fail(di_error** err, di_status code, std::string message, std::string detail) {
  if (err != nullptr) {
    // If even the error object cannot be allocated the code alone must still reach the caller.
    try {
      *err = new di_error{code, std::move(message), std::move(detail)};
    } catch (...) {
      *err = nullptr;
    }
  }
  return code;
}

di_status fail(di_error** err, const Status& status) {
  return fail(err, static_cast<di_status>(status.code()), status.message(), status.detail());
}

di_status copy_text_out(const std::string& text, char** out, size_t* len, di_error** err) {
  char* buf = static_cast<char*>(std::malloc(text.size() + 1));
  if (buf == nullptr) return fail(err, DI_E_OOM, "out of memory");
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  *out = buf;
  if (len != nullptr) *len = text.size();
  return DI_OK;
}

}  // namespace di::capi

extern "C" {

DI_API uint32_t di_abi_version(void) {
  return DI_VERSION_MAJOR * 10000u + DI_VERSION_MINOR * 100u + DI_VERSION_PATCH;
}

DI_API const char* di_version_string(void) {
#ifdef DI_HAVE_CUDA_BACKEND
  return "1.0.0 (cuda sm_90a)";
#else
  return "1.0.0 (cpu)";
#endif
}

DI_API const char* di_build_info(void) {
  // Built once; a function-local static is thread-safe and the probe cannot throw out.
  static const std::string info = [] {
    try {
      nlohmann::json j;
      j["version"] = "1.0.0";
      j["abi_version"] = di_abi_version();
      j["cuda"] = di::capi::built_with_cuda();
      j["cuda_arch"] = di::capi::built_with_cuda() ? "sm_90a" : "";
      j["cuda_devices"] = di::capi::cuda_device_count();
      j["cpu_threads"] = di::capi::cpu_thread_count();
      j["backends"] = di::capi::backends_json();
      return j.dump();
    } catch (...) {
      return std::string("{}");
    }
  }();
  return info.c_str();
}

DI_API const char* di_status_name(di_status status) {
  switch (status) {
    case DI_OK: return "DI_OK";
    case DI_TIMEOUT: return "DI_TIMEOUT";
    case DI_END_OF_STREAM: return "DI_END_OF_STREAM";
    case DI_AGAIN: return "DI_AGAIN";
    case DI_BUFFER_TOO_SMALL: return "DI_BUFFER_TOO_SMALL";
    case DI_E_INVALID_ARG: return "DI_E_INVALID_ARG";
    case DI_E_OOM: return "DI_E_OOM";
    case DI_E_UNSUPPORTED: return "DI_E_UNSUPPORTED";
    case DI_E_NOT_FOUND: return "DI_E_NOT_FOUND";
    case DI_E_IO: return "DI_E_IO";
    case DI_E_PARSE: return "DI_E_PARSE";
    case DI_E_CANCELLED: return "DI_E_CANCELLED";
    case DI_E_INTERNAL: return "DI_E_INTERNAL";
    case DI_E_LIMIT: return "DI_E_LIMIT";
    case DI_E_STATE: return "DI_E_STATE";
    case DI_E_DEVICE: return "DI_E_DEVICE";
    case DI_E_PERMISSION: return "DI_E_PERMISSION";
    default: return "DI_UNKNOWN_STATUS";
  }
}

DI_API di_status di_error_code(const di_error* error) {
  return error == nullptr ? DI_E_INVALID_ARG : error->code;
}

DI_API const char* di_error_message(const di_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

DI_API const char* di_error_detail(const di_error* error) {
  return error == nullptr ? "" : error->detail.c_str();
}

DI_API void di_error_destroy(di_error* error) { delete error; }

DI_API void di_free(void* ptr) { std::free(ptr); }

}  // extern "C"
