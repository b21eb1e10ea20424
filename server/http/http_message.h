// HttpRequest / HttpResponse: what a route handler reads and fills. A response is either a
// whole body or a chunked stream that a provider writes through a DataSink while the
// connection stays open. Plain data; HttpListener owns the wire.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace di::server {

struct HttpRequest {
  std::string method;
  std::string path;    // without the query
  std::string target;  // as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<std::string> matches;  // matches[0] = path, then the route's captures
  std::string local_addr, remote_addr;  // numeric, as getnameinfo writes them
  int local_port = 0, remote_port = 0;

  bool has_header(std::string_view name) const;
  // The first value of `name` (case-insensitive), "" when absent.
  std::string get_header_value(std::string_view name) const;
};

// Where a streaming provider writes. write() blocks up to the write timeout while the client
// does not read; false means the connection is gone (the provider should stop).
class DataSink {
 public:
  using WriteFn = std::function<bool(const char* data, size_t size)>;
  explicit DataSink(WriteFn write) : write_(std::move(write)) {}
  bool write(const char* data, size_t size) { return write_(data, size); }
  void done() { done_ = true; }
  bool is_done() const { return done_; }

 private:
  WriteFn write_;
  bool done_ = false;
};

struct HttpResponse {
  // Called until it calls sink.done() (the stream ended) or returns false (abandon the
  // connection). `offset` is the number of payload bytes written so far.
  using ContentProvider = std::function<bool(size_t offset, DataSink& sink)>;
  // Called once after the stream, with whether it ended by done().
  using Releaser = std::function<void(bool success)>;

  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  ContentProvider provider;
  Releaser releaser;

  void set_header(std::string name, std::string value);
  void set_content(std::string content, std::string content_type);
  void set_chunked_content_provider(std::string content_type, ContentProvider p, Releaser r = {});
  bool has_header(std::string_view name) const;
};

bool header_name_equals(std::string_view a, std::string_view b);

}  // namespace di::server
