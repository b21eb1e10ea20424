// route_engine_log: a di_log_fn that writes each record through JsonLog.
#include "server/engine_log.h"

#include <string>

#include "deepinfer.h"

namespace di::server {
namespace {

void forward(void* user, int32_t level, const char* message, size_t len) {
  const char* name = level == DI_LOG_ERROR ? "error" : level == DI_LOG_WARN ? "warn" : level == DI_LOG_INFO ? "info" : "debug";
  static_cast<JsonLog*>(user)->write(name, "engine", {{"message", std::string(message, len)}});
}

}  // namespace

void route_engine_log(JsonLog* log, int32_t max_level) { di_log_set(forward, log, max_level, nullptr); }

void restore_engine_log() { di_log_set(nullptr, nullptr, DI_LOG_WARN, nullptr); }

}  // namespace di::server
