// SseWriter: Server-Sent Events framing (`event:` / `data:` lines, blank-line terminated) over a
// byte sink. Remembers the first failed write, which is how a vanished client shows up.
// Does not know what the events mean; the recipe's parser produces them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace di::server {

// One event as it goes on the wire. An empty `event` omits the `event:` line (Chat Completions
// sends data-only events). Every line of `data` becomes its own `data:` line, so a payload with
// newlines survives; CR and CRLF count as line ends as the SSE grammar says.
std::string sse_frame(std::string_view event, std::string_view data);

class SseWriter {
 public:
  // `sink` writes bytes to the client and returns false once the client is gone.
  explicit SseWriter(std::function<bool(const char*, size_t)> sink) : sink_(std::move(sink)) {}

  // Writes one event; false (and every later call false without writing) once a write failed.
  bool write_event(std::string_view event, std::string_view data);
  // A comment line (": ping"): keeps proxies from timing out and probes that the client is there.
  bool write_comment(std::string_view text);
  bool failed() const { return failed_; }
  size_t events_written() const { return events_; }

 private:
  bool write_raw(const std::string& bytes);

  std::function<bool(const char*, size_t)> sink_;
  bool failed_ = false;
  size_t events_ = 0;
};

}  // namespace di::server
