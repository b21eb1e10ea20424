// ApiKeyAuth: decides whether a request carries one of the server's API keys, in
// `Authorization: Bearer KEY` (OpenAI clients) or `x-api-key: KEY` (Anthropic clients).
// Knows nothing of HTTP routing; compares in time independent of where keys differ.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace di::server {

// Equal length and bytes, in time that depends only on the lengths: a timing probe learns
// nothing about how many leading bytes it guessed right.
bool constant_time_equals(std::string_view a, std::string_view b);

// The key a request presents: the Bearer token when `authorization` is "Bearer <token>"
// (scheme case-insensitive), else `x_api_key`; "" when neither carries one.
std::string_view presented_api_key(std::string_view authorization, std::string_view x_api_key);

class ApiKeyAuth {
 public:
  explicit ApiKeyAuth(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  bool enabled() const { return !keys_.empty(); }
  // True when auth is off, or the presented key equals one of the keys. Every key is compared
  // (no early exit), so the time does not tell which key matched.
  bool allows(std::string_view authorization, std::string_view x_api_key) const;

 private:
  std::vector<std::string> keys_;
};

}  // namespace di::server
