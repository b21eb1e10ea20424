// ServerState: what every handler shares — the engine and recipe (both thread-safe through the
// C ABI), the configuration, auth, metrics and the log. Owned by HttpServer; handlers borrow it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "deepinfer.h"
#include "server/auth.h"
#include "server/json_log.h"
#include "server/server_config.h"
#include "server/server_metrics.h"

namespace di::server {

struct ServerState {
  explicit ServerState(ServerConfig c) : config(std::move(c)), auth(config.api_keys) {}

  ServerConfig config;
  ApiKeyAuth auth;
  ServerMetrics metrics;
  JsonLog log;
  di_engine* engine = nullptr;
  di_recipe* recipe = nullptr;
  int64_t created_unix = 0;  // the served models' "created" time: when the server started
  std::atomic<bool> stopping{false};
};

// What one HTTP request did, for its log line and metrics. One per worker thread: HttpListener runs
// routing, the handler, a streaming body and the logger of a request on the same thread.
struct RequestTrace {
  std::chrono::steady_clock::time_point start;
  std::string route;          // the matched route pattern ("" until routed)
  std::string request_id;     // sent back as x-request-id
  uint64_t engine_request = 0;
  std::string outcome;        // "finished", "client_gone", "deadline", "error", "rejected"
  int64_t prompt_tokens = -1, cached_prompt_tokens = -1, completion_tokens = -1;
  int32_t finish_reason = -1;
  std::string error;
  bool stream = false;
  bool counted = false;       // request_started was called for it
};

RequestTrace& current_trace();

}  // namespace di::server
