// CompletionsRequest: the body of a legacy `POST /v1/completions` (OpenAI's text completions,
// still what benchmark tools and many clients send) read and checked. No recipe is involved: the
// prompt is raw text or token ids. Owns the field rules and their 400s; knows no engine or HTTP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/error_response.h"

namespace di::server {

struct CompletionsRequest {
  std::string model;
  std::optional<std::string> prompt_text;  // prompt as text ...
  std::vector<int32_t> prompt_ids;         // ... or as token ids
  uint32_t n = 1;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool echo = false;           // the prompt's text comes first in each choice
  int32_t logprobs = -1;       // -1: none; k >= 0: the sampled token's and the k most likely
  // The sampling keys of di_submit (max_tokens defaults to 16, as OpenAI's API does).
  nlohmann::json sampling = nlohmann::json::object();
};

// Reads `body` (JSON text) into *out. Returns the OpenAI 400 naming the field for a malformed
// body or field, and for what this server does not do (several prompts, suffix, best_of != n);
// nothing on success. Sampling values are range-checked later, by di_submit, whose messages
// name the key.
std::optional<ApiError> parse_completions_request(const std::string& body,
                                                          CompletionsRequest* out);

}  // namespace di::server
