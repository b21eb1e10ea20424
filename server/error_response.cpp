// Server-raised errors: the error type each API documents for a status code.
#include "server/error_response.h"

namespace di::server {

recipe::Protocol protocol_for(std::string_view path, bool has_anthropic_version) {
  if (path.rfind("/v1/messages", 0) == 0 || has_anthropic_version) return recipe::Protocol::kMessages;
  if (path.rfind("/v1/responses", 0) == 0) return recipe::Protocol::kResponses;
  return recipe::Protocol::kChatCompletions;
}

recipe::ApiError server_error(recipe::Protocol protocol, int http_status, std::string message,
                              std::string code) {
  recipe::ApiError e = recipe::ApiError::bad_request(protocol, "", std::move(message));
  e.http_status = http_status;
  e.code = std::move(code);
  const bool anthropic = protocol == recipe::Protocol::kMessages;
  switch (http_status) {
    case 401: e.type = "authentication_error"; break;
    case 403: e.type = "permission_error"; break;
    case 404: e.type = anthropic ? "not_found_error" : "invalid_request_error"; break;
    case 413: e.type = anthropic ? "request_too_large" : "invalid_request_error"; break;
    case 429: e.type = "rate_limit_error"; break;
    case 503: e.type = anthropic ? "overloaded_error" : "internal_error"; break;
    case 504: e.type = anthropic ? "api_error" : "timeout"; break;
    default: e.type = http_status >= 500 ? (anthropic ? "api_error" : "internal_error") : "invalid_request_error";
  }
  return e;
}

std::string engine_limit_code(std::string_view message) {
  auto has = [message](std::string_view s) { return message.find(s) != std::string_view::npos; };
  if (has("max_model_len")) return "context_length_exceeded";
  if (has("nested deeper") || has("nesting deeper") || has("chain longer")) return "grammar_too_deep";
  if (has("grammar:") || has("json_schema:") || has("regex:")) return "grammar_too_complex";
  if (has("max_num_seqs")) return "n_too_large";
  return "limit_exceeded";
}

}  // namespace di::server
