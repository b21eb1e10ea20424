// The engine's log records (di_log_set) as the server's JSON lines, {"event": "engine",
// "message": ...} at the record's level, so every line the server writes stays one JSON object.
#pragma once

#include <cstdint>

#include "server/json_log.h"

namespace di::server {

// `log` must outlive the routing: call restore_engine_log() before it goes.
void route_engine_log(JsonLog* log, int32_t max_level);
void restore_engine_log();

}  // namespace di::server
