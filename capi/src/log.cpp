// di_log_set: the C ABI face of base/log (the process-wide log sink).
#include "api_guard.h"
#include "base/log.h"

extern "C" {

DI_API di_status di_log_set(di_log_fn fn, void* user_data, int32_t max_level, di_error** err) {
  DI_API_BEGIN
  if (max_level < DI_LOG_ERROR || max_level > DI_LOG_DEBUG)
    return di::capi::fail(err, DI_E_INVALID_ARG,
                          "max_level: expected DI_LOG_ERROR (0) .. DI_LOG_DEBUG (3), got " + std::to_string(max_level));
  di::log::set_sink(fn, user_data, static_cast<di::log::Level>(max_level));
  return DI_OK;
  DI_API_END(err)
}

}  // extern "C"
