// Request-line and field-line grammar of RFC 9112 §3 and §5, framing of §6.3. Lenient forms the
// RFC allows a server to accept (obs-fold, bare LF, whitespace before the colon, several
// Content-Length values) are refused: behind a proxy that reads them differently they split one
// request into two (request smuggling).
#include "server/http/request_head.h"

#include <algorithm>
#include <cctype>

namespace di::server::http {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// tchar of RFC 9110 §5.6.2.
bool is_tchar(unsigned char c) {
  if (std::isalnum(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_tchar(static_cast<unsigned char>(c)); });
}

// field-vchar / obs-text, SP and HTAB; every other control byte (NUL, CR, LF, DEL) is refused.
bool is_field_value(std::string_view s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  return true;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HeadParse refuse(int status, std::string message) {
  HeadParse r;
  r.state = HeadParse::State::kError;
  r.status = status;
  r.message = std::move(message);
  return r;
}

// Content-Length = 1*DIGIT (no sign, no spaces inside, no list), below 2^63.
bool parse_length(std::string_view v, uint64_t* out) {
  if (v.empty() || v.size() > 18) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

// Splits a comma-separated list (RFC 9110 §5.6.1), empty elements dropped.
std::vector<std::string_view> list_elements(std::string_view v) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string_view::npos) comma = v.size();
    std::string_view e = trim_ows(v.substr(start, comma - start));
    if (!e.empty()) out.push_back(e);
    start = comma + 1;
  }
  return out;
}

HeadParse decide_framing(RequestHead* head) {
  bool has_te = false, has_cl = false;
  for (const auto& [name, value] : head->headers) {
    if (iequals(name, "Transfer-Encoding")) {
      if (has_te) return refuse(400, "Transfer-Encoding: sent more than once");
      has_te = true;
      const auto codings = list_elements(value);
      if (codings.size() != 1 || !iequals(codings[0], "chunked")) {
        // Only chunked alone is understood; "identity, chunked", "gzip, chunked" and the like
        // would need decoders this server does not have (and "identity" is no longer a coding).
        if (!codings.empty() && iequals(codings.back(), "chunked"))
          return refuse(501, "Transfer-Encoding: only \"chunked\" is supported, got \"" + value + "\"");
        return refuse(400, "Transfer-Encoding: the final coding must be \"chunked\", got \"" + value + "\"");
      }
    } else if (iequals(name, "Content-Length")) {
      uint64_t n = 0;
      if (!parse_length(value, &n))
        return refuse(400, "Content-Length: expected decimal digits below 10^18, got \"" + value + "\"");
      if (has_cl && n != head->content_length)
        return refuse(400, "Content-Length: sent twice with different values");
      has_cl = true;
      head->content_length = n;
    }
  }
  if (has_te && has_cl) return refuse(400, "both Transfer-Encoding and Content-Length: the framing is ambiguous");
  if (has_te && head->minor_version == 0) return refuse(400, "Transfer-Encoding: chunked needs HTTP/1.1");
  head->framing = has_te ? BodyFraming::kChunked : has_cl ? BodyFraming::kLength : BodyFraming::kNone;
  HeadParse ok;
  ok.state = HeadParse::State::kComplete;
  return ok;
}

}  // namespace

std::string_view RequestHead::get(std::string_view name) const {
  for (const auto& [n, v] : headers)
    if (iequals(n, name)) return v;
  return {};
}

bool RequestHead::has(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.first, name)) return true;
  return false;
}

HeadParse parse_request_head(std::string_view buffer, const HeadLimits& limits, RequestHead* head) {
  size_t pos = 0;
  // Leading CRLFs (a client's stray line end after a previous body) are skipped, a bounded few.
  while (pos + 1 < buffer.size() && buffer[pos] == '\r' && buffer[pos + 1] == '\n' && pos < 8) pos += 2;
  const size_t start = pos;
  const size_t end = buffer.find("\r\n\r\n", start);
  if (end == std::string_view::npos) {
    if (buffer.size() - start > limits.max_head_bytes)
      return refuse(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");
    // Count the field lines seen so far, so that a flood of small headers is cut off early.
    size_t lines = static_cast<size_t>(std::count(buffer.begin() + static_cast<std::ptrdiff_t>(start), buffer.end(), '\n'));
    if (lines > limits.max_headers + 1) return refuse(431, "more than " + std::to_string(limits.max_headers) + " header fields");
    return {};
  }
  if (end + 4 - start > limits.max_head_bytes)
    return refuse(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");

  *head = RequestHead{};
  std::string_view text = buffer.substr(start, end - start);
  const size_t line_end = text.find("\r\n");
  std::string_view line = text.substr(0, line_end);
  // request-line = method SP request-target SP HTTP-version, single spaces.
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return refuse(400, "malformed request line");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return refuse(400, "malformed request method");
  if (target.empty() || target[0] != '/') return refuse(400, "request target: expected an absolute path");
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f) return refuse(400, "request target: control, space or non-ASCII byte");
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." || version[7] < '0' || version[7] > '9') {
    if (version.substr(0, 5) == "HTTP/") return refuse(505, "only HTTP/1.x is served, got " + std::string(version));
    return refuse(400, "malformed HTTP version");
  }
  head->method = std::string(method);
  head->target = std::string(target);
  head->path = std::string(target.substr(0, target.find('?')));
  head->minor_version = version[7] - '0';

  size_t p = line_end == std::string_view::npos ? text.size() : line_end + 2;
  while (p < text.size()) {
    size_t e = text.find("\r\n", p);
    if (e == std::string_view::npos) e = text.size();
    const std::string_view field = text.substr(p, e - p);
    p = e + 2;
    if (field.find('\n') != std::string_view::npos || field.find('\r') != std::string_view::npos)
      return refuse(400, "a bare CR or LF inside the header section");
    if (!field.empty() && (field[0] == ' ' || field[0] == '\t'))
      return refuse(400, "obsolete line folding in the header section");
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos) return refuse(400, "a header line without ':'");
    const std::string_view name = field.substr(0, colon);
    if (!is_token(name)) return refuse(400, "malformed header name \"" + std::string(name.substr(0, 64)) + "\"");
    const std::string_view value = trim_ows(field.substr(colon + 1));
    if (!is_field_value(value))
      return refuse(400, "header " + std::string(name) + ": control byte in the value");
    if (head->headers.size() == limits.max_headers)
      return refuse(431, "more than " + std::to_string(limits.max_headers) + " header fields");
    head->headers.emplace_back(std::string(name), std::string(value));
  }

  if (head->minor_version >= 1 && !head->has("Host")) return refuse(400, "Host: required in HTTP/1.1");
  int hosts = 0;
  for (const auto& h : head->headers) hosts += iequals(h.first, "Host") ? 1 : 0;
  if (hosts > 1) return refuse(400, "Host: sent more than once");

  const auto conn = list_elements(head->get("Connection"));
  const bool close = std::any_of(conn.begin(), conn.end(), [](std::string_view t) { return iequals(t, "close"); });
  const bool ka = std::any_of(conn.begin(), conn.end(), [](std::string_view t) { return iequals(t, "keep-alive"); });
  head->keep_alive = head->minor_version >= 1 ? !close : ka;

  HeadParse r = decide_framing(head);
  if (r.state != HeadParse::State::kComplete) return r;
  r.head_bytes = end + 4;
  return r;
}

}  // namespace di::server::http
