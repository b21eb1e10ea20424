// The read-only endpoints: GET /v1/models (and /v1/models/{id}), /health and /metrics.
// They report state; they never touch a request's generation.
#pragma once

#include "server/http/http_message.h"

#include "server/server_state.h"

namespace di::server {

// The served names as one list both SDKs read: OpenAI's {"object": "list", "data": [{"id",
// "object": "model", "created", "owned_by"}]} and Anthropic's {"data": [{"id", "type": "model",
// "display_name", "created_at"}], "has_more", "first_id", "last_id"} share the "data" array, so
// each entry carries both sets of fields.
void handle_models(ServerState& state, const HttpRequest& req, HttpResponse& res);
void handle_model(ServerState& state, const HttpRequest& req, HttpResponse& res);
// 200 {"status": "ok"} while serving, 503 {"status": "stopping"} during shutdown.
void handle_health(ServerState& state, const HttpRequest& req, HttpResponse& res);
// Prometheus text: the server's counters, then the engine's (di_engine_metrics format 1) plus
// the KV block gauges from its JSON form.
void handle_metrics(ServerState& state, const HttpRequest& req, HttpResponse& res);

}  // namespace di::server
