// RequestPolicy: what a keyless server accepts from the head of a request — a loopback Host
// (or one the operator listed), no browser Origin unless listed, JSON bodies marked as JSON.
// A page in the user's browser can send requests to 127.0.0.1 (a "simple" text/plain POST needs
// no preflight) or rebind its own name to it; these three checks refuse both. Pure decisions on
// header values; no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace di::server {

// The host part of a Host header value ("localhost:8000" → "localhost", "[::1]:80" → "::1"),
// lowercased; "" when malformed.
std::string host_of(std::string_view host_header);

// localhost, *.localhost (RFC 6761: always loopback), 127.0.0.0/8 and ::1.
bool is_loopback_host(std::string_view host);

// The media type of a Content-Type value is application/json (parameters allowed).
bool is_json_media_type(std::string_view content_type);

struct RequestPolicy {
  bool keyless = true;
  std::vector<std::string> allowed_hosts;  // lowercase names or addresses besides loopback
  std::vector<std::string> cors_origins;   // exact origins ("https://app.example")

  // "" when the head is acceptable, else why it is refused (a 403 for Host/Origin, a 415 for
  // the media type: *status says which). `body_route`: the route takes a JSON body.
  std::string refusal(std::string_view host_header, bool has_origin, std::string_view origin,
                      bool body_route, std::string_view content_type, int* status) const;
  // Whether `origin` is listed (gets Access-Control-Allow-Origin).
  bool cors_allows(std::string_view origin) const;
};

}  // namespace di::server
