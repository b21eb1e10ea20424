// RequestHead: one HTTP/1.1 request line and header section, parsed strictly (RFC 9112) under
// byte and count limits, and the body framing it declares. Knows nothing of sockets, routes or
// keys: it reads bytes and says what they are, or which 4xx they earn.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace di::server::http {

struct HeadLimits {
  size_t max_head_bytes = 64 << 10;  // request line + headers + the blank line (431 past it)
  size_t max_headers = 100;          // header fields (431 past it)
};

enum class BodyFraming { kNone, kLength, kChunked };

struct RequestHead {
  std::string method;
  std::string target;  // as sent: origin-form "/v1/models?x=1"
  std::string path;    // target up to '?'
  int minor_version = 1;  // HTTP/1.<minor_version>
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent, values trimmed
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // kLength
  bool keep_alive = true;       // after this request (Connection, version)

  // The first value of header `name` (case-insensitive), or "" ; has() tells absent from empty.
  std::string_view get(std::string_view name) const;
  bool has(std::string_view name) const;
};

// The outcome of feeding bytes: kIncomplete (more bytes needed), kComplete (`head_bytes` of the
// buffer were the head; the body, or the next request, follows), or a refusal with its status
// (400 malformed, 431 head too large or too many headers, 501 a transfer coding
// other than chunked, 505 a version other than HTTP/1.x) and a message naming what was wrong.
struct HeadParse {
  enum class State { kIncomplete, kComplete, kError };
  State state = State::kIncomplete;
  size_t head_bytes = 0;
  int status = 0;
  std::string message;
};

// Parses `buffer` from its start. Call again with the grown buffer while kIncomplete; the
// limits are checked on every call, so an endless head is refused once it passes them, not
// when it ends. Empty lines before the request line (RFC 9112 §2.2) are skipped.
HeadParse parse_request_head(std::string_view buffer, const HeadLimits& limits, RequestHead* head);

}  // namespace di::server::http
