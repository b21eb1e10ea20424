// WriteStallWatch: progress is the kernel's count of bytes the peer acknowledged
// (tcpi_bytes_acked); pending is the send queue (SIOCOUTQ: unsent plus unacknowledged).
#include "server/write_stall.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstddef>

namespace di::server {

WriteStallWatch::WriteStallWatch(int fd, std::chrono::milliseconds timeout)
    : fd_(fd), timeout_(timeout), progress_(Clock::now()) {}

bool WriteStallWatch::stalled(Clock::time_point now) {
  if (fd_ < 0) return false;
  tcp_info info{};
  socklen_t len = sizeof info;
  int pending = 0;
  if (getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || ioctl(fd_, SIOCOUTQ, &pending) != 0)
    return false;  // cannot tell: leave it to the socket's own write timeout
  // A kernel too old to report acknowledged bytes (before Linux 4.1) returns a shorter struct.
  if (len < offsetof(tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked) return false;
  if (pending == 0 || info.tcpi_bytes_acked != acked_) {
    acked_ = info.tcpi_bytes_acked;
    progress_ = now;
    return false;
  }
  return now - progress_ >= timeout_;
}

}  // namespace di::server
