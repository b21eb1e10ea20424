// Server-raised errors: the error type each API documents for a status code, and the two
// envelopes.
#include "server/error_response.h"

namespace di::server {

nlohmann::json ApiError::body() const {
  using json = nlohmann::json;
  if (protocol == Protocol::kMessages) return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  return json{{"error",
               {{"message", message},
                {"type", type},
                {"param", param.empty() ? json(nullptr) : json(param)},
                {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

Protocol protocol_for(std::string_view path, bool has_anthropic_version) {
  if (path.rfind("/v1/messages", 0) == 0 || has_anthropic_version) return Protocol::kMessages;
  if (path.rfind("/v1/responses", 0) == 0) return Protocol::kResponses;
  return Protocol::kChatCompletions;
}

ApiError server_error(Protocol protocol, int http_status, std::string message, std::string code) {
  ApiError e;
  e.protocol = protocol;
  e.http_status = http_status;
  e.message = std::move(message);
  e.code = std::move(code);
  const bool anthropic = protocol == Protocol::kMessages;
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

ApiError bad_request(Protocol protocol, std::string param, std::string message) {
  ApiError e = server_error(protocol, 400, std::move(message));
  e.param = std::move(param);
  return e;
}

ApiError model_not_found(Protocol protocol, std::string_view model) {
  ApiError e = server_error(protocol, 404,
                            "The model `" + std::string(model) + "` does not exist or you do not have access to it.",
                            "model_not_found");
  e.param = "model";
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
