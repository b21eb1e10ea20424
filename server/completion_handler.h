// The generation endpoints: POST /v1/chat/completions, /v1/responses and /v1/messages. One
// handler serves all three because the recipe already speaks each protocol; this file owns the
// HTTP side: status codes, SSE streaming, deadlines and cancelling when the client leaves.
#pragma once

#include "server/http/http_message.h"

#include "server/error_response.h"
#include "server/server_state.h"

namespace di::server {

void handle_completion(ServerState& state, Protocol protocol, const HttpRequest& req,
                       HttpResponse& res);

}  // namespace di::server
