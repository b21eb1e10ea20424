// Host, Origin and media-type rules of a keyless server.
#include "server/request_policy.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>

namespace di::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string host_of(std::string_view v) {
  if (v.empty()) return "";
  if (v.front() == '[') {
    const size_t close = v.find(']');
    if (close == std::string_view::npos) return "";
    const std::string_view rest = v.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "";
    return lower(v.substr(1, close - 1));
  }
  const size_t colon = v.find(':');
  std::string_view h = v.substr(0, colon);
  if (colon != std::string_view::npos) {
    const std::string_view port = v.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return "";
  }
  if (h.empty()) return "";
  std::string out = lower(h);
  if (out.back() == '.') out.pop_back();  // "localhost." names the same host
  return out;
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  if (host.size() > 10 && host.substr(host.size() - 10) == ".localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, std::string(host).c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, std::string(host).c_str(), &a6) == 1) {
    static const in6_addr loop = IN6ADDR_LOOPBACK_INIT;
    return std::equal(std::begin(a6.s6_addr), std::end(a6.s6_addr), std::begin(loop.s6_addr));
  }
  return false;
}

bool is_json_media_type(std::string_view ct) {
  const size_t semi = ct.find(';');
  std::string_view t = ct.substr(0, semi);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  return lower(t) == "application/json";
}

bool RequestPolicy::cors_allows(std::string_view origin) const {
  return std::find(cors_origins.begin(), cors_origins.end(), origin) != cors_origins.end();
}

std::string RequestPolicy::refusal(std::string_view host_header, bool has_origin, std::string_view origin,
                                   bool body_route, std::string_view content_type, int* status) const {
  if (!keyless) return "";
  *status = 403;
  const std::string host = host_of(host_header);
  if (host.empty()) {
    *status = 400;
    return "Host: malformed \"" + std::string(host_header.substr(0, 128)) + "\"";
  }
  if (!is_loopback_host(host) && std::find(allowed_hosts.begin(), allowed_hosts.end(), host) == allowed_hosts.end())
    return "Host: \"" + host + "\" is not a loopback name; without an API key this server answers only "
           "loopback hosts (list others with --allowed-host)";
  if (has_origin && !cors_allows(origin))
    return "Origin: requests from web pages (\"" + std::string(origin.substr(0, 128)) +
           "\") are refused without an API key (allow one with --cors-origin)";
  if (body_route && !is_json_media_type(content_type)) {
    *status = 415;
    return "Content-Type: expected application/json, got \"" + std::string(content_type.substr(0, 128)) + "\"";
  }
  return "";
}

}  // namespace di::server
