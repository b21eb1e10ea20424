// The event loop (accept, read heads, deadlines) and the workers (admit, body, handler,
// response). A connection belongs to exactly one of them at a time: the loop while it waits for
// a head, a worker from a complete head until its response is written; then it goes back to the
// loop (keep-alive, with any pipelined bytes already read) or is closed.
#include "server/http/http_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http/chunked_decoder.h"

namespace di::server::http {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often blocked I/O and the loop look at the stop flag and deadlines.
constexpr milliseconds kSlice{200};

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string numeric_host(const sockaddr_storage& sa, socklen_t len, int* port) {
  char host[NI_MAXHOST] = "", serv[NI_MAXSERV] = "";
  getnameinfo(reinterpret_cast<const sockaddr*>(&sa), len, host, sizeof host, serv, sizeof serv,
              NI_NUMERICHOST | NI_NUMERICSERV);
  *port = std::atoi(serv);
  return host;
}

struct Conn {
  int fd = -1;
  std::string buf;  // bytes read and not yet consumed
  Clock::time_point deadline;
  bool idle = true;  // waiting for the first byte of a head (keep-alive) rather than its rest
  bool draining = false;  // refused: discarding what the client still sends, then closing
  size_t drained = 0;
  int served = 0;
  std::string local_addr, remote_addr;
  int local_port = 0, remote_port = 0;
};

// Writes all of `data`, waiting up to `timeout` each time the client takes nothing.
bool write_all(int fd, const char* data, size_t size, milliseconds timeout) {
  auto last_progress = Clock::now();
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      last_progress = Clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (Clock::now() - last_progress > timeout) return false;
    pollfd p{fd, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(kSlice.count()));
    if (r > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
  }
  return true;
}

}  // namespace

struct HttpListener::Impl {
  Impl(ListenerLimits l, Hooks h) : limits(std::move(l)), hooks(std::move(h)) {}

  ListenerLimits limits;
  Hooks hooks;
  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::atomic<bool> force_close{false};

  std::mutex mu;  // guards everything below
  std::condition_variable work_cv, idle_cv;
  std::deque<std::unique_ptr<Conn>> ready;     // complete heads waiting for a worker
  std::vector<std::unique_ptr<Conn>> returned;  // keep-alive connections back to the loop
  std::set<int> busy_fds;                       // connections a worker holds
  std::unordered_map<std::string, int> per_client;
  int open = 0;
  int busy_workers = 0;

  // Loop-only state.
  std::unordered_map<int, std::unique_ptr<Conn>> waiting;

  void wake() {
    const uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof one);
  }

  void close_conn(std::unique_ptr<Conn> c) {
    if (!c) return;
    ::shutdown(c->fd, SHUT_RDWR);
    ::close(c->fd);
    std::lock_guard<std::mutex> l(mu);
    --open;
    if (--per_client[c->remote_addr] <= 0) per_client.erase(c->remote_addr);
  }

  // A refusal written from the loop: status line, JSON body, then a lingering close without
  // blocking the loop (see linger_close for why): the connection stays watched, its bytes are
  // discarded, and it is closed at EOF, after kDrainTime or past kDrainBytes.
  static constexpr milliseconds kDrainTime{2000};
  static constexpr size_t kDrainBytes = 16u << 20;

  void refuse_and_close(std::unique_ptr<Conn> c, int status, const std::string& message, const RequestHead* head) {
    HttpRequest req;
    if (head) {
      req.method = head->method;
      req.path = head->path;
      req.headers = head->headers;
    }
    req.remote_addr = c->remote_addr;
    HttpResponse res;
    res.status = status;
    if (hooks.error_body) hooks.error_body(req, res, message);
    if (hooks.refused) hooks.refused(status, message, c->remote_addr);
    send_response_head_and_body(c->fd, req, res, /*close=*/true);
    ::shutdown(c->fd, SHUT_WR);
    c->draining = true;
    c->buf.clear();
    c->buf.shrink_to_fit();
    c->deadline = Clock::now() + kDrainTime;
    const int fd = c->fd;
    watch(c.get());
    waiting.emplace(fd, std::move(c));
  }

  // Discards what a refused client sends; true when the connection should close now.
  bool drain(Conn* c) {
    char tmp[65536];
    for (;;) {
      const ssize_t n = ::recv(c->fd, tmp, sizeof tmp, 0);
      if (n > 0) {
        c->drained += static_cast<size_t>(n);
        if (c->drained > kDrainBytes) return true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    }
  }

  bool send_response_head_and_body(int fd, const HttpRequest&, HttpResponse& res, bool close) {
    std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + reason_phrase(res.status) + "\r\n";
    for (const auto& [k, v] : res.headers) out += k + ": " + v + "\r\n";
    if (res.provider) {
      out += "Transfer-Encoding: chunked\r\n";
    } else {
      out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
    }
    if (close) out += "Connection: close\r\n";
    out += "\r\n";
    if (!res.provider) out += res.body;
    return write_all(fd, out.data(), out.size(), limits.write_timeout);
  }

  // ---- the event loop ----

  void watch(Conn* c) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = c->fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &ev);
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage sa{};
      socklen_t len = sizeof sa;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of descriptors (EMFILE): the backlog waits
      }
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->remote_addr = numeric_host(sa, len, &c->remote_port);
      sockaddr_storage la{};
      socklen_t llen = sizeof la;
      getsockname(fd, reinterpret_cast<sockaddr*>(&la), &llen);
      c->local_addr = numeric_host(la, llen, &c->local_port);
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // SSE events are small
      c->deadline = Clock::now() + limits.head_timeout;
      c->idle = false;  // a new connection's whole head must come within head_timeout
      int status = 0;
      {
        std::lock_guard<std::mutex> l(mu);
        ++open;
        const int mine = ++per_client[c->remote_addr];
        if (open > limits.max_connections) status = 503;
        else if (mine > limits.max_connections_per_client) status = 429;
      }
      if (status == 503) {
        refuse_and_close(std::move(c), 503, "the server has " + std::to_string(limits.max_connections) +
                                                " connections open; retry later", nullptr);
        continue;
      }
      if (status == 429) {
        refuse_and_close(std::move(c), 429, "more than " + std::to_string(limits.max_connections_per_client) +
                                                " connections from one client", nullptr);
        continue;
      }
      watch(c.get());
      waiting.emplace(fd, std::move(c));
    }
  }

  // Reads what the socket has; hands a complete head to the workers. False: closed.
  void on_readable(int fd) {
    auto it = waiting.find(fd);
    if (it == waiting.end()) return;
    Conn* c = it->second.get();
    if (c->draining) {
      if (drain(c)) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        auto own = std::move(it->second);
        waiting.erase(it);
        close_conn(std::move(own));
      }
      return;
    }
    char tmp[16384];
    bool eof = false;
    for (;;) {
      const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n > 0) {
        if (c->idle) {
          c->idle = false;
          c->deadline = Clock::now() + limits.head_timeout;
        }
        c->buf.append(tmp, static_cast<size_t>(n));
        if (c->buf.size() > limits.head.max_head_bytes + 16) break;  // the parser refuses it
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) eof = true;
      break;
    }
    try_dispatch(fd, eof);
  }

  void try_dispatch(int fd, bool eof) {
    auto it = waiting.find(fd);
    if (it == waiting.end()) return;
    Conn* c = it->second.get();
    if (!c->buf.empty()) {
      RequestHead head;
      const HeadParse p = parse_request_head(c->buf, limits.head, &head);
      if (p.state == HeadParse::State::kError) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        auto own = std::move(it->second);
        waiting.erase(it);
        return refuse_and_close(std::move(own), p.status, p.message, nullptr);
      }
      if (p.state == HeadParse::State::kComplete) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        auto own = std::move(it->second);
        waiting.erase(it);
        std::lock_guard<std::mutex> l(mu);
        busy_fds.insert(fd);
        ready.push_back(std::move(own));
        work_cv.notify_one();
        return;
      }
    }
    if (eof) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      auto own = std::move(it->second);
      waiting.erase(it);
      close_conn(std::move(own));
    }
  }

  void sweep_deadlines() {
    const auto now = Clock::now();
    std::vector<int> late;
    for (auto& [fd, c] : waiting)
      if (now >= c->deadline) late.push_back(fd);
    for (int fd : late) {
      auto it = waiting.find(fd);
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      auto own = std::move(it->second);
      waiting.erase(it);
      if (own->draining || (own->idle && own->buf.empty())) {
        close_conn(std::move(own));  // drained long enough, or keep-alive ran out: nothing to answer
      } else {
        refuse_and_close(std::move(own), 408, "the request head did not arrive within " +
                                                  std::to_string(limits.head_timeout.count()) + " ms", nullptr);
      }
    }
  }

  void take_returned() {
    std::vector<std::unique_ptr<Conn>> back;
    {
      std::lock_guard<std::mutex> l(mu);
      back.swap(returned);
    }
    for (auto& c : back) {
      const int fd = c->fd;
      c->idle = c->buf.empty();
      c->deadline = Clock::now() + (c->idle ? limits.keep_alive_timeout : limits.head_timeout);
      watch(c.get());
      waiting.emplace(fd, std::move(c));
      try_dispatch(fd, false);  // a pipelined request may already be whole in the buffer
    }
  }

  void loop() {
    epoll_event events[64];
    while (!stopping.load()) {
      const int n = epoll_wait(epoll_fd, events, 64, static_cast<int>(kSlice.count()));
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd) {
          accept_all();
        } else if (fd == wake_fd) {
          uint64_t v;
          (void)!::read(wake_fd, &v, sizeof v);
        } else {
          on_readable(fd);
        }
      }
      take_returned();
      sweep_deadlines();
    }
    // Stopping: nothing waiting for a head is answered.
    for (auto& [fd, c] : waiting) close_conn(std::move(c));
    waiting.clear();
  }

  // ---- the workers ----

  enum class BodyEnd { kOk, kTimeout, kTooLarge, kMalformed, kGone };

  // Reads more bytes into c->buf; false on EOF, error, deadline or force_close.
  bool read_more(Conn* c, Clock::time_point deadline, bool* timed_out) {
    char tmp[65536];
    for (;;) {
      if (force_close.load()) return false;
      const ssize_t n = ::recv(c->fd, tmp, sizeof tmp, 0);
      if (n > 0) {
        c->buf.append(tmp, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      const auto now = Clock::now();
      if (now >= deadline) {
        *timed_out = true;
        return false;
      }
      pollfd p{c->fd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<int64_t>(kSlice.count(),
          std::chrono::duration_cast<milliseconds>(deadline - now).count() + 1)));
    }
  }

  BodyEnd read_body(Conn* c, const RequestHead& head, std::string* body, std::string* error) {
    const auto deadline = Clock::now() + limits.body_timeout;
    bool timed_out = false;
    if (head.framing == BodyFraming::kLength) {
      const size_t want = static_cast<size_t>(head.content_length);
      while (c->buf.size() < want)
        if (!read_more(c, deadline, &timed_out)) return timed_out ? BodyEnd::kTimeout : BodyEnd::kGone;
      body->assign(c->buf, 0, want);
      c->buf.erase(0, want);
      return BodyEnd::kOk;
    }
    if (head.framing == BodyFraming::kChunked) {
      ChunkedDecoder dec(limits.max_body_bytes);
      for (;;) {
        size_t used = 0;
        const ChunkedDecoder::State s = dec.feed(c->buf, &used, body);
        c->buf.erase(0, used);
        if (s == ChunkedDecoder::State::kDone) return BodyEnd::kOk;
        if (s != ChunkedDecoder::State::kNeedMore) {
          *error = dec.error();
          return s == ChunkedDecoder::State::kTooLarge ? BodyEnd::kTooLarge : BodyEnd::kMalformed;
        }
        if (!read_more(c, deadline, &timed_out)) return timed_out ? BodyEnd::kTimeout : BodyEnd::kGone;
      }
    }
    return BodyEnd::kOk;
  }

  // One request on `c`, whose buffer starts with a complete head. True: keep the connection.
  // *unread: the request's body was left unread (the close must linger, see linger_close).
  bool serve_request(Conn* c, bool* unread) {
    RequestHead head;
    const HeadParse p = parse_request_head(c->buf, limits.head, &head);
    c->buf.erase(0, p.head_bytes);
    ++c->served;

    HttpRequest req;
    req.method = head.method;
    req.path = head.path;
    req.target = head.target;
    req.headers = head.headers;
    req.local_addr = c->local_addr;
    req.remote_addr = c->remote_addr;
    req.local_port = c->local_port;
    req.remote_port = c->remote_port;
    HttpResponse res;
    if (hooks.begin) hooks.begin(req, res);

    bool keep = head.keep_alive && c->served < limits.max_requests_per_connection && !stopping.load();
    auto layer_error = [&](int status, const std::string& message) {
      res.status = status;
      res.body.clear();
      res.provider = nullptr;
      if (hooks.error_body) hooks.error_body(req, res, message);
      return false;
    };

    // Route, key and policy first (an unauthenticated client learns nothing of the limits),
    // then framing and size; all before a body byte is read.
    bool go = hooks.admit ? hooks.admit(req, res) : true;
    const bool body_method = head.method == "POST" || head.method == "PUT" || head.method == "PATCH";
    if (go) {
      if (head.framing == BodyFraming::kNone && body_method) {
        go = layer_error(411, head.method + " needs Content-Length or Transfer-Encoding: chunked");
      } else if (head.framing == BodyFraming::kLength && head.content_length > limits.max_body_bytes) {
        go = layer_error(413, "request body of " + std::to_string(head.content_length) + " bytes is over the " +
                                  std::to_string(limits.max_body_bytes) + "-byte limit (--max-body-bytes)");
      } else if (const std::string_view ce = head.get("Content-Encoding"); !ce.empty() && !header_name_equals(ce, "identity")) {
        // Decoding would turn a small body into an unbounded one; clients send JSON as is.
        go = layer_error(415, "Content-Encoding: \"" + std::string(ce) + "\" is not accepted; send the body unencoded");
      } else if (head.has("Expect") && !header_name_equals(head.get("Expect"), "100-continue")) {
        go = layer_error(417, "Expect: only 100-continue is understood");
      }
    }
    if (!go) {
      keep = false;  // the body (if any) was never read: the stream is out of step
      *unread = head.framing != BodyFraming::kNone;
    }

    if (go) {
      if (header_name_equals(head.get("Expect"), "100-continue") && head.framing != BodyFraming::kNone) {
        static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (!write_all(c->fd, kContinue, sizeof kContinue - 1, limits.write_timeout)) return false;
      }
      std::string error;
      switch (read_body(c, head, &req.body, &error)) {
        case BodyEnd::kOk: break;
        case BodyEnd::kGone: return false;
        case BodyEnd::kTimeout:
          go = layer_error(408, "the request body did not arrive within " +
                                    std::to_string(limits.body_timeout.count()) + " ms");
          keep = false;
          break;
        case BodyEnd::kTooLarge:
          go = layer_error(413, error + " (--max-body-bytes)");
          keep = false;
          *unread = true;
          break;
        case BodyEnd::kMalformed:
          go = layer_error(400, error);
          keep = false;
          break;
      }
    }
    if (go && hooks.handle) {
      hooks.handle(req, res);
    }

    bool ok = send_response_head_and_body(c->fd, req, res, !keep);
    if (ok && res.provider) {
      size_t offset = 0;
      DataSink sink([&](const char* d, size_t n) {
        if (n == 0) return true;
        char size_line[24];
        const int len = std::snprintf(size_line, sizeof size_line, "%zx\r\n", n);
        std::string chunk(size_line, static_cast<size_t>(len));
        chunk.append(d, n);
        chunk += "\r\n";
        if (!write_all(c->fd, chunk.data(), chunk.size(), limits.write_timeout)) return false;
        offset += n;
        return true;
      });
      while (ok && !sink.is_done()) ok = res.provider(offset, sink);
      if (ok) ok = write_all(c->fd, "0\r\n\r\n", 5, limits.write_timeout);
      if (res.releaser) res.releaser(ok);
    }
    if (hooks.end) hooks.end(req, res);
    return ok && keep;
  }

  // Closing a socket with unread bytes makes the kernel send a reset, and a client still
  // sending its body may then lose the answer it was sent (401, 413). Half-close and discard
  // what comes for a bounded time and size first, as HTTP servers do (RFC 9112 §9.6).
  void linger_close(int fd) {
    ::shutdown(fd, SHUT_WR);
    const auto end = Clock::now() + milliseconds(2000);
    size_t drained = 0;
    char tmp[65536];
    while (Clock::now() < end && drained < (16u << 20) && !force_close.load()) {
      const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n > 0) {
        drained += static_cast<size_t>(n);
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return;
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(kSlice.count()));
    }
  }

  void worker() {
    for (;;) {
      std::unique_ptr<Conn> c;
      {
        std::unique_lock<std::mutex> l(mu);
        work_cv.wait(l, [&] { return !ready.empty() || stopping.load(); });
        if (ready.empty()) return;
        c = std::move(ready.front());
        ready.pop_front();
        ++busy_workers;
      }
      const int fd = c->fd;
      bool keep = false, unread = false;
      try {
        keep = serve_request(c.get(), &unread);
      } catch (...) {
        keep = false;  // a hook threw past its own handler: drop the connection, keep serving
      }
      if (!keep && unread) linger_close(fd);
      {
        std::lock_guard<std::mutex> l(mu);
        busy_fds.erase(fd);
        if (keep && !stopping.load()) {
          returned.push_back(std::move(c));
          wake();
        }
      }
      close_conn(std::move(c));  // null when it went back to the loop
      std::lock_guard<std::mutex> l(mu);
      --busy_workers;
      idle_cv.notify_all();
    }
  }
};

HttpListener::HttpListener(ListenerLimits limits, Hooks hooks)
    : impl_(std::make_unique<Impl>(std::move(limits), std::move(hooks))) {}

HttpListener::~HttpListener() {
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  if (impl_->epoll_fd >= 0) ::close(impl_->epoll_fd);
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
}

Result<int> HttpListener::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string serv = std::to_string(port);
  if (getaddrinfo(host.c_str(), serv.c_str(), &hints, &res) != 0 || res == nullptr)
    return Status::io("cannot resolve " + host);
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) break;
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) return Status::io("cannot listen on " + host + ":" + serv + " (in use, or no such address)");
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  int bound = 0;
  numeric_host(sa, len, &bound);
  impl_->listen_fd = fd;
  impl_->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (int f : {impl_->listen_fd, impl_->wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = f;
    epoll_ctl(impl_->epoll_fd, EPOLL_CTL_ADD, f, &ev);
  }
  return bound;
}

Status HttpListener::serve() {
  Impl& m = *impl_;
  if (m.listen_fd < 0) return Status::invalid_argument("serve: bind first");
  std::vector<std::thread> workers;
  for (int i = 0; i < m.limits.workers; ++i) workers.emplace_back([&m] { m.worker(); });
  m.loop();
  {
    std::lock_guard<std::mutex> l(m.mu);
    m.work_cv.notify_all();
  }
  for (std::thread& t : workers) t.join();
  // Connections that came back for keep-alive after the loop ended.
  std::vector<std::unique_ptr<Conn>> rest;
  {
    std::lock_guard<std::mutex> l(m.mu);
    rest.swap(m.returned);
    for (auto& c : m.ready) rest.push_back(std::move(c));
    m.ready.clear();
  }
  for (auto& c : rest) m.close_conn(std::move(c));
  return Status::ok();
}

void HttpListener::stop(std::chrono::milliseconds grace) {
  Impl& m = *impl_;
  if (m.stopping.exchange(true)) return;
  m.wake();
  std::unique_lock<std::mutex> l(m.mu);
  m.work_cv.notify_all();
  // Requests in flight get the grace period; then their sockets are shut down, which ends every
  // blocked read or write on them at once.
  m.idle_cv.wait_for(l, grace, [&] { return m.busy_workers == 0; });
  if (m.busy_workers > 0) {
    m.force_close.store(true);
    for (int fd : m.busy_fds) ::shutdown(fd, SHUT_RDWR);
  }
}

int HttpListener::open_connections() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->open;
}

}  // namespace di::server::http
