// ApiKeyAuth: header extraction and constant-time comparison.
#include "server/auth.h"

#include <cctype>

namespace di::server {

bool constant_time_equals(std::string_view a, std::string_view b) {
  // Fold the length difference in and walk the longer input fully, so neither the first
  // mismatching byte nor a length mismatch exits early.
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::string_view presented_api_key(std::string_view authorization, std::string_view x_api_key) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  authorization = trim(authorization);
  constexpr std::string_view kBearer = "bearer";
  if (authorization.size() > kBearer.size() && (authorization[kBearer.size()] == ' ')) {
    bool scheme = true;
    for (size_t i = 0; i < kBearer.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(authorization[i])) != kBearer[i]) scheme = false;
    if (scheme) {
      std::string_view token = trim(authorization.substr(kBearer.size() + 1));
      if (!token.empty()) return token;
    }
  }
  return trim(x_api_key);
}

bool ApiKeyAuth::allows(std::string_view authorization, std::string_view x_api_key) const {
  if (keys_.empty()) return true;
  const std::string_view presented = presented_api_key(authorization, x_api_key);
  if (presented.empty()) return false;
  bool ok = false;
  for (const std::string& k : keys_) ok = constant_time_equals(presented, k) || ok;
  return ok;
}

}  // namespace di::server
