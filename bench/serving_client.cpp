// The benchmark's HTTP/1.1 client: connect, write the request, read the head, decode the body
// (RFC 9112 framing: chunked, Content-Length, or until close) and split text/event-stream bodies
// into events as the WHATWG parsing rules do for the `data` field.
#include "bench/serving_client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace di::bench {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Socket {
 public:
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::string connect(const HttpTarget& t) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(t.port);
    if (int rc = ::getaddrinfo(t.host.c_str(), port.c_str(), &hints, &res); rc != 0)
      return "resolving " + t.host + ": " + gai_strerror(rc);
    std::string err = "no address for " + t.host;
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      timeval tv{t.timeout_s, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
        err.clear();
        break;
      }
      err = "connecting to " + t.host + ":" + port + ": " + std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(res);
    return err;
  }
  bool write_all(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Appends what arrives to buf; 0 at the peer's close, < 0 on an error or timeout.
  ssize_t read_some(std::string& buf) {
    char tmp[16384];
    for (;;) {
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) buf.append(tmp, static_cast<size_t>(n));
      return n;
    }
  }

 private:
  int fd_ = -1;
};

// Bytes of the connection, consumed from the front.
class Reader {
 public:
  explicit Reader(Socket& s) : s_(s) {}
  bool fill() {  // false at close or error
    if (pos_ > 0 && pos_ == buf_.size()) {
      buf_.clear();
      pos_ = 0;
    }
    return s_.read_some(buf_) > 0;
  }
  bool line(std::string* out) {  // one CRLF- (or LF-) terminated line, without its terminator
    for (;;) {
      size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        size_t end = nl > pos_ && buf_[nl - 1] == '\r' ? nl - 1 : nl;
        out->assign(buf_, pos_, end - pos_);
        pos_ = nl + 1;
        return true;
      }
      if (!fill()) return false;
    }
  }
  // Up to `max` bytes, at least one unless the connection ended.
  size_t some(size_t max, std::string* out) {
    if (pos_ == buf_.size() && !fill()) return 0;
    const size_t n = std::min(max, buf_.size() - pos_);
    out->assign(buf_, pos_, n);
    pos_ += n;
    return n;
  }

 private:
  Socket& s_;
  std::string buf_;
  size_t pos_ = 0;
};

class EventSplitter {
 public:
  explicit EventSplitter(const SseHandler& h) : h_(h) {}
  void feed(const std::string& bytes) {
    const Clock::time_point now = Clock::now();
    pending_ += bytes;
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = pending_.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) {
        if (has_data_) h_(data_, now);
        data_.clear();
        has_data_ = false;
      } else if (line.compare(0, 5, "data:") == 0) {
        size_t v = line.size() > 5 && line[5] == ' ' ? 6 : 5;
        if (has_data_) data_ += '\n';
        data_ += line.substr(v);
        has_data_ = true;
      }  // comments, event:, id:, retry: carry nothing the benchmark reads
    }
    pending_.erase(0, start);
  }

 private:
  const SseHandler& h_;
  std::string pending_, data_;
  bool has_data_ = false;
};

}  // namespace

HttpResult http_request(const HttpTarget& target, const std::string& method, const std::string& path,
                        const std::string& api_key, const std::string& body, const SseHandler& on_event) {
  HttpResult r;
  Socket sock;
  if (std::string e = sock.connect(target); !e.empty()) {
    r.error = e;
    return r;
  }
  const std::string host = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(target.port) +
                    "\r\nConnection: close\r\nAccept: */*\r\n";
  if (!api_key.empty()) req += "Authorization: Bearer " + api_key + "\r\n";
  if (!body.empty()) req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  if (!sock.write_all(req)) {
    r.error = std::string("sending the request: ") + std::strerror(errno);
    return r;
  }
  Reader in(sock);
  std::string line;
  if (!in.line(&line)) {
    r.error = "the connection closed before a status line";
    return r;
  }
  if (line.compare(0, 7, "HTTP/1.") != 0 || line.size() < 12) {
    r.error = "not an HTTP/1.x status line: " + line.substr(0, 80);
    return r;
  }
  r.status = std::atoi(line.c_str() + 9);
  bool chunked = false, event_stream = false;
  long long length = -1;
  for (;;) {
    if (!in.line(&line)) {
      r.error = "the connection closed inside the response head";
      return r;
    }
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = lower(line.substr(0, colon));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (name == "transfer-encoding" && lower(value).find("chunked") != std::string::npos) chunked = true;
    if (name == "content-length") length = std::atoll(value.c_str());
    if (name == "content-type" && lower(value).find("text/event-stream") != std::string::npos) event_stream = true;
  }
  EventSplitter events(on_event);
  auto sink = [&](const std::string& bytes) {
    if (on_event && event_stream) events.feed(bytes);
    else r.body += bytes;
  };
  std::string piece;
  if (chunked) {
    for (;;) {
      if (!in.line(&line)) {
        r.error = "the connection closed inside a chunked body";
        return r;
      }
      char* end = nullptr;
      const unsigned long long size = std::strtoull(line.c_str(), &end, 16);
      if (end == line.c_str()) {
        r.error = "bad chunk size line: " + line.substr(0, 40);
        return r;
      }
      if (size == 0) break;  // trailers, if any, are not read: the connection closes
      for (unsigned long long left = size; left > 0;) {
        const size_t n = in.some(static_cast<size_t>(left), &piece);
        if (n == 0) {
          r.error = "the connection closed inside a chunk";
          return r;
        }
        sink(piece);
        left -= n;
      }
      if (!in.line(&line) || !line.empty()) {
        r.error = "a chunk did not end with CRLF";
        return r;
      }
    }
  } else if (length >= 0) {
    for (long long left = length; left > 0;) {
      const size_t n = in.some(static_cast<size_t>(left), &piece);
      if (n == 0) {
        r.error = "the connection closed " + std::to_string(left) + " bytes before the body's end";
        return r;
      }
      sink(piece);
      left -= static_cast<long long>(n);
    }
  } else {
    while (in.some(1 << 16, &piece) > 0) sink(piece);
  }
  r.ok = true;
  return r;
}

}  // namespace di::bench
