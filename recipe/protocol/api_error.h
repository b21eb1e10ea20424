// ApiError: a rejected request as the API that received it reports it — HTTP status plus the
// protocol's error body. Builds bodies only; it does not decide what is wrong with a request.
// Travels inside di::Status (message + detail {"status": N, "body": {...}}) across the recipe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/protocol/protocol.h"

namespace di::recipe {

struct ApiError {
  Protocol protocol = Protocol::kChatCompletions;
  int http_status = 400;
  // OpenAI `error.type` / Anthropic `error.type`: "invalid_request_error", "not_found_error",
  // "api_error", ... Filled from http_status by the factories below.
  std::string type;
  // OpenAI `error.code` ("model_not_found", "context_length_exceeded"); empty → null.
  // Anthropic bodies have no code.
  std::string code;
  // OpenAI `error.param` ("messages[2].content"); empty → null.
  std::string param;
  std::string message;

  // OpenAI: {"error": {"message", "type", "param", "code"}};
  // Anthropic: {"type": "error", "error": {"type", "message"}}.
  nlohmann::json body() const;
  // {"status": http_status, "body": body()} — what di_error_detail carries.
  nlohmann::json detail() const;
  // A Status whose message is `message` (with the param in front when set) and whose detail is
  // detail() as JSON. The StatusCode follows the HTTP status (404 → kNotFound, 413/context →
  // kLimit, 5xx → kInternal, else kInvalidArgument).
  Status to_status() const;

  // 400 invalid_request_error; `param` names the offending field ("" when none).
  static ApiError bad_request(Protocol protocol, std::string param, std::string message);
  // 404, code model_not_found (OpenAI) / not_found_error (Anthropic).
  static ApiError model_not_found(Protocol protocol, std::string_view model);
  // 400, code context_length_exceeded.
  static ApiError context_length_exceeded(Protocol protocol, std::string message);
  // 500 api_error / internal_error.
  static ApiError internal(Protocol protocol, std::string message);
};

// The ApiError a Status carries in its detail, or — for a Status made elsewhere (a tokenizer
// failure, an I/O error) — one built from its code and message (500 unless it is a client error).
ApiError api_error_from_status(Protocol protocol, const Status& status);

}  // namespace di::recipe
