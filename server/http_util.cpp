// Response helpers.
#include "server/http_util.h"

#include "deepinfer.h"
#include "server/server_state.h"

namespace di::server {

void send_json(HttpResponse& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void send_error(HttpResponse& res, const recipe::ApiError& error) {
  current_trace().error = error.message;
  if (current_trace().outcome.empty()) current_trace().outcome = "rejected";
  send_json(res, error.http_status, error.body().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

int32_t c_protocol(recipe::Protocol protocol) {
  switch (protocol) {
    case recipe::Protocol::kChatCompletions: return DI_PROTOCOL_CHAT_COMPLETIONS;
    case recipe::Protocol::kResponses: return DI_PROTOCOL_RESPONSES;
    case recipe::Protocol::kMessages: return DI_PROTOCOL_MESSAGES;
  }
  return DI_PROTOCOL_CHAT_COMPLETIONS;
}

}  // namespace di::server
