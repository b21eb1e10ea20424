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

}  // namespace di::server
