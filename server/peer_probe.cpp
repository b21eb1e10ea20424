// PeerProbe: socket lookup by address pair and the non-destructive end-of-stream check.
#include "server/peer_probe.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>

namespace di::server {
namespace {

// The numeric host and the port of `addr`; false for anything but IPv4/IPv6.
bool host_and_port(const sockaddr_storage& addr, socklen_t len, std::string* host, int* port) {
  if (addr.ss_family == AF_INET) {
    *port = ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  } else if (addr.ss_family == AF_INET6) {
    *port = ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  } else {
    return false;
  }
  char buf[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, buf, sizeof buf, nullptr, 0,
                  NI_NUMERICHOST) != 0)
    return false;
  *host = buf;
  return true;
}

}  // namespace

int find_connection_socket(const std::string& local_addr, int local_port,
                           const std::string& remote_addr, int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return -1;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  const int own = dirfd(dir);
  int found = -1;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == own) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    std::string host;
    int port = 0;
    // getsockname fails (ENOTSOCK) at once for files and pipes; the listener has no peer.
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    if (!host_and_port(addr, len, &host, &port) || port != local_port) continue;
    if (!local_addr.empty() && host != local_addr) continue;
    len = sizeof addr;
    if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    if (!host_and_port(addr, len, &host, &port) || port != remote_port || host != remote_addr) continue;
    found = static_cast<int>(fd);
    break;
  }
  closedir(dir);
  return found;
}

PeerProbe::PeerProbe(std::string local_addr, int local_port, std::string remote_addr, int remote_port)
    : local_addr_(std::move(local_addr)),
      remote_addr_(std::move(remote_addr)),
      local_port_(local_port),
      remote_port_(remote_port) {}

bool PeerProbe::client_gone() {
  if (!looked_up_) {
    looked_up_ = true;
    fd_ = find_connection_socket(local_addr_, local_port_, remote_addr_, remote_port_);
  }
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return true;
  if (!(p.revents & (POLLIN | POLLRDHUP))) return false;
  char byte;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;  // the client sent more (pipelining): it is there
  if (n == 0) return true;  // end of stream: the client closed its side
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;  // reset
}

}  // namespace di::server
