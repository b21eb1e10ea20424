// A minimal blocking HTTP/1.1 client over POSIX sockets for the serving benchmark: one request
// per connection (Connection: close), bodies framed by Content-Length, chunked coding or the
// close, and a callback per Server-Sent Event as its bytes arrive, stamped on arrival. Only what
// a benchmark against a local server needs: no TLS, no redirects, no proxies.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace di::bench {

using Clock = std::chrono::steady_clock;

struct HttpTarget {
  std::string host = "127.0.0.1";
  int port = 0;
  int timeout_s = 600;  // per socket read or write
};

struct HttpResult {
  bool ok = false;      // a complete response arrived (any status)
  std::string error;    // why not, when !ok
  int status = 0;
  std::string body;     // the whole body when no event callback was given; else what was not an event
};

// One event's `data` (its data lines joined by "\n") and when its last byte arrived.
using SseHandler = std::function<void(const std::string& data, Clock::time_point at)>;

// Sends `method path` with `body` (content type application/json when non-empty) and reads the
// response. When `on_event` is set and the response is text/event-stream, each event is handed to
// it as soon as its blank line arrives. `api_key` empty: no Authorization header.
HttpResult http_request(const HttpTarget& target, const std::string& method, const std::string& path,
                        const std::string& api_key, const std::string& body, const SseHandler& on_event = {});

}  // namespace di::bench
