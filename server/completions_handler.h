// POST /v1/completions: OpenAI's legacy text completions, which benchmark tools and many clients
// still send. The prompt (text or token ids) goes to the engine as it is — no chat template, no
// recipe — and the output comes back as `text_completion` objects, streamed (SSE, then
// `data: [DONE]`) or as one body. Shares the deadline, client-gone and shutdown rules of the
// chat endpoints.
#pragma once

#include "server/http/http_message.h"

#include "server/server_state.h"

namespace di::server {

void handle_legacy_completion(ServerState& state, const HttpRequest& req, HttpResponse& res);

}  // namespace di::server
