// Header lookups (names compare case-insensitively, RFC 9110 §5.1) and response setters.
#include "server/http/http_message.h"

#include <cctype>

namespace di::server {

bool header_name_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool HttpRequest::has_header(std::string_view name) const {
  for (const auto& h : headers)
    if (header_name_equals(h.first, name)) return true;
  return false;
}

std::string HttpRequest::get_header_value(std::string_view name) const {
  for (const auto& h : headers)
    if (header_name_equals(h.first, name)) return h.second;
  return "";
}

void HttpResponse::set_header(std::string name, std::string value) {
  for (auto& h : headers)
    if (header_name_equals(h.first, name)) {
      h.second = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponse::set_content(std::string content, std::string content_type) {
  body = std::move(content);
  set_header("Content-Type", std::move(content_type));
}

void HttpResponse::set_chunked_content_provider(std::string content_type, ContentProvider p, Releaser r) {
  set_header("Content-Type", std::move(content_type));
  provider = std::move(p);
  releaser = std::move(r);
}

bool HttpResponse::has_header(std::string_view name) const {
  for (const auto& h : headers)
    if (header_name_equals(h.first, name)) return true;
  return false;
}

}  // namespace di::server
