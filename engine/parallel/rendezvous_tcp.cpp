#include "engine/parallel/rendezvous_tcp.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace di::engine::parallel {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text() { return std::strerror(errno); }

int64_t ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : left;
}

Clock::time_point deadline_after(int64_t timeout_ms) {
  return Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
}

std::string address(const std::string& host, int32_t port) { return host + ":" + std::to_string(port); }

}  // namespace

bool parse_tcp_rendezvous(const std::string& spec, std::string* host, int32_t* port) {
  constexpr const char kScheme[] = "tcp://";
  if (spec.rfind(kScheme, 0) != 0) return false;
  const std::string rest = spec.substr(sizeof(kScheme) - 1);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return false;
  int64_t p = 0;
  for (size_t i = colon + 1; i < rest.size(); ++i) {
    if (rest[i] < '0' || rest[i] > '9') return false;
    p = p * 10 + (rest[i] - '0');
    if (p > 65535) return false;
  }
  if (p == 0) return false;
  *host = rest.substr(0, colon);
  *port = static_cast<int32_t>(p);
  return true;
}

Result<std::unique_ptr<RendezvousServer>> RendezvousServer::listen(const std::string& host, int32_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int e = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res); e != 0) {
    return Status::io("rendezvous " + address(host, port) + ": getaddrinfo: " + gai_strerror(e));
  }
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::freeaddrinfo(res);
    return Status::io("rendezvous " + address(host, port) + ": socket: " + errno_text());
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = ::bind(fd, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd, 128) == 0;
  ::freeaddrinfo(res);
  if (!bound) {
    std::string err = errno_text();
    ::close(fd);
    return Status::io("rendezvous " + address(host, port) + ": bind/listen: " + err);
  }
  sockaddr_in actual{};
  socklen_t len = sizeof(actual);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &len);
  return std::unique_ptr<RendezvousServer>(new RendezvousServer(fd, ntohs(actual.sin_port)));
}

RendezvousServer::~RendezvousServer() {
  if (fd_ >= 0) ::close(fd_);
}

Status RendezvousServer::serve(const std::string& blob, int32_t peers, int64_t timeout_ms) {
  const auto deadline = deadline_after(timeout_ms);
  for (int32_t served = 0; served < peers;) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(ms_left(deadline)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Status::io("rendezvous port " + std::to_string(port_) + ": poll: " + errno_text());
    if (ready == 0) {
      return Status::io("rendezvous port " + std::to_string(port_) + ": " + std::to_string(served) + " of " +
                        std::to_string(peers) + " ranks connected within " + std::to_string(timeout_ms) + " ms");
    }
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return Status::io("rendezvous port " + std::to_string(port_) + ": accept: " + errno_text());
    }
    // The blob is a few hundred bytes: one send fits the socket buffer; loop for short writes.
    size_t sent = 0;
    while (sent < blob.size()) {
      ssize_t w = ::send(c, blob.data() + sent, blob.size() - sent, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      sent += static_cast<size_t>(w);
    }
    ::close(c);
    // A peer that dropped mid-send retries with a new connection; count only full handoffs.
    if (sent == blob.size()) ++served;
  }
  return Status::ok();
}

Result<std::string> fetch_rendezvous_blob(const std::string& host, int32_t port, int64_t size, int64_t timeout_ms) {
  if (size <= 0) return Status::invalid_argument("rendezvous size: expected > 0, got " + std::to_string(size));
  const auto deadline = deadline_after(timeout_ms);
  std::string last_error = "no attempt";
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); e != 0) {
      last_error = std::string("getaddrinfo: ") + gai_strerror(e);
    } else {
      int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
      if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
        ::freeaddrinfo(res);
        std::string blob(static_cast<size_t>(size), '\0');
        size_t got = 0;
        while (got < blob.size()) {
          pollfd p{fd, POLLIN, 0};
          int ready = ::poll(&p, 1, static_cast<int>(ms_left(deadline)));
          if (ready < 0 && errno == EINTR) continue;
          if (ready <= 0) break;
          ssize_t r = ::recv(fd, blob.data() + got, blob.size() - got, 0);
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) break;
          got += static_cast<size_t>(r);
        }
        ::close(fd);
        if (got == blob.size()) return blob;
        return Status::io("rendezvous " + address(host, port) + ": expected " + std::to_string(size) +
                          " bytes, got " + std::to_string(got));
      }
      last_error = std::string("connect: ") + errno_text();
      if (fd >= 0) ::close(fd);
      ::freeaddrinfo(res);
    }
    if (Clock::now() >= deadline) {
      return Status::io("rendezvous " + address(host, port) + ": rank 0 not reachable within " +
                        std::to_string(timeout_ms) + " ms (" + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace di::engine::parallel
