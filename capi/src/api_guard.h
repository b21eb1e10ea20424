// The C ABI's safety net: turns a di::Status into a di_status + di_error, and every C++
// exception into DI_E_OOM / DI_E_INTERNAL, so nothing ever unwinds into the caller.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "base/status.h"
#include "deepinfer.h"

struct di_error {
  di_status code;
  std::string message;
  std::string detail;
};

namespace di::capi {

// Stores a new di_error in *err (when err is not NULL) and returns the status code.
di_status fail(di_error** err, di_status code, std::string message, std::string detail = {});
di_status fail(di_error** err, const Status& status);

// Hands `text` to the caller as a NUL-terminated buffer it releases with di_free; `len` may
// be NULL. DI_E_OOM when it cannot be allocated.
di_status copy_text_out(const std::string& text, char** out, size_t* len, di_error** err);

// Returns DI_OK or the failed Status as a code + error.
inline di_status to_status(di_error** err, const Status& status) {
  return status.is_ok() ? DI_OK : fail(err, status);
}

}  // namespace di::capi

// Wraps an exported function's body. `err` must be the function's di_error** parameter (or a
// local nullptr for functions without one).
#define DI_API_BEGIN try {
#define DI_API_END(err)                                                          \
  }                                                                              \
  catch (const std::bad_alloc&) {                                                \
    return ::di::capi::fail((err), DI_E_OOM, "out of memory");                   \
  }                                                                              \
  catch (const std::exception& e) {                                              \
    return ::di::capi::fail((err), DI_E_INTERNAL, std::string("internal error: ") + e.what()); \
  }                                                                              \
  catch (...) {                                                                  \
    return ::di::capi::fail((err), DI_E_INTERNAL, "internal error: unknown exception"); \
  }

// Rejects a NULL pointer argument with a message naming it.
#define DI_REQUIRE_ARG(ptr, err)                                                            \
  do {                                                                                      \
    if ((ptr) == nullptr)                                                                   \
      return ::di::capi::fail((err), DI_E_INVALID_ARG, #ptr ": must not be NULL");          \
  } while (0)
