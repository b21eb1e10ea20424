// Errors the server itself raises (401, 404, 413, 503, 504, ...) in the wire format of the API
// the client speaks: OpenAI {"error": {...}} or Anthropic {"type": "error", "error": {...}}.
// Request-validation errors come from the recipe, through the C ABI, already formatted
// (di_error_detail's body); this covers the rest. The server is a client of deepinfer.h only,
// so these types are its own: Protocol is numbered as the C ABI's DI_PROTOCOL_* values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace di::server {

// The API a request speaks.
enum class Protocol : int32_t {
  kChatCompletions = DI_PROTOCOL_CHAT_COMPLETIONS,
  kResponses = DI_PROTOCOL_RESPONSES,
  kMessages = DI_PROTOCOL_MESSAGES,
};

// The value di_recipe_prepare takes for `protocol`.
inline int32_t c_protocol(Protocol protocol) { return static_cast<int32_t>(protocol); }

struct ApiError {
  Protocol protocol = Protocol::kChatCompletions;
  int http_status = 400;
  std::string type;     // OpenAI / Anthropic error.type
  std::string code;     // OpenAI error.code; empty: null. Anthropic bodies have none.
  std::string param;    // OpenAI error.param; empty: null.
  std::string message;

  nlohmann::json body() const;
};

// The API a request speaks: Messages for /v1/messages or when the client sent
// `anthropic-version` (the Anthropic SDK always does), otherwise OpenAI.
Protocol protocol_for(std::string_view path, bool has_anthropic_version);

// An ApiError with `http_status`, the matching error type of `protocol` and `message`;
// `code` (OpenAI only) may be empty.
ApiError server_error(Protocol protocol, int http_status, std::string message, std::string code = "");

// 400 invalid_request_error naming `param` (may be empty).
ApiError bad_request(Protocol protocol, std::string param, std::string message);

// 404 for a model this server does not serve, as OpenAI words it (code model_not_found).
ApiError model_not_found(Protocol protocol, std::string_view model);

// The OpenAI `code` for an engine refusal with DI_E_LIMIT, from what its message says was over:
// "context_length_exceeded" (prompt + max_tokens over max_model_len), "grammar_too_deep" (a
// schema, regex or grammar nested past the compilers' bound), "grammar_too_complex" (its compile
// work or automaton budget), "n_too_large" (more completions than max_num_seqs), else
// "limit_exceeded". The engine's limit status is one code for all of these.
std::string engine_limit_code(std::string_view message);

}  // namespace di::server
