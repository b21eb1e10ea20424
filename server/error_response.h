// Errors the server itself raises (401, 404, 413, 503, 504, ...) in the wire format of the API
// the client speaks: OpenAI {"error": {...}} or Anthropic {"type": "error", "error": {...}}.
// Request-validation errors come from the recipe already formatted; this covers the rest.
#pragma once

#include <string>
#include <string_view>

#include "recipe/protocol/api_error.h"

namespace di::server {

// The API a request speaks: Messages for /v1/messages or when the client sent
// `anthropic-version` (the Anthropic SDK always does), otherwise OpenAI.
recipe::Protocol protocol_for(std::string_view path, bool has_anthropic_version);

// An ApiError with `http_status`, the matching error type of `protocol` and `message`;
// `code` (OpenAI only) may be empty.
recipe::ApiError server_error(recipe::Protocol protocol, int http_status, std::string message,
                              std::string code = "");

// The OpenAI `code` for an engine refusal with DI_E_LIMIT, from what its message says was over:
// "context_length_exceeded" (prompt + max_tokens over max_model_len), "grammar_too_deep" (a
// schema, regex or grammar nested past the compilers' bound), "grammar_too_complex" (its compile
// work or automaton budget), "n_too_large" (more completions than max_num_seqs), else
// "limit_exceeded". The engine's limit status is one code for all of these.
std::string engine_limit_code(std::string_view message);

}  // namespace di::server
