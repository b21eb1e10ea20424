// WriteStallWatch: tells whether the client of a streamed response has stopped reading — the
// bytes the server wrote sit unacknowledged and none were taken for the write timeout. Owns no
// socket (HttpListener does) and never reads or writes it; it only asks the kernel (TCP_INFO).
#pragma once

#include <chrono>
#include <cstdint>

namespace di::server {

class WriteStallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // `fd`: the connection's socket (find_connection_socket), -1 when unknown (then never
  // stalled). `timeout`: how long pending bytes may wait without the client taking any.
  WriteStallWatch(int fd, std::chrono::milliseconds timeout);

  // True once bytes have been waiting in the socket and the client acknowledged none of them
  // for the timeout. The kernel's send buffer (megabytes on loopback and fast links) would let
  // a client that stops reading hold its request for most of a generation before a write
  // blocks; this watches the client's progress instead of the buffer's fill level.
  bool stalled(Clock::time_point now = Clock::now());

 private:
  int fd_;
  std::chrono::milliseconds timeout_;
  uint64_t acked_ = 0;           // the peer's acknowledged bytes when last seen
  Clock::time_point progress_;   // when bytes were last acknowledged or nothing was pending
};

}  // namespace di::server
