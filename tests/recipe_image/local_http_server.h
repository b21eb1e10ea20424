// LocalHttpServer: a cpp-httplib server on a loopback address and an ephemeral port, run on its
// own thread for the fetch tests. Counts the requests it receives and how many overlap, so a
// test can prove that a refused destination was never contacted.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace di::recipe::image::testing {

class LocalHttpServer {
 public:
  explicit LocalHttpServer(std::string host = "127.0.0.1");
  ~LocalHttpServer();

  // Registers routes before start().
  httplib::Server& routes() { return server_; }
  void start();

  int port() const { return port_; }
  std::string url(const std::string& path) const;
  int requests() const { return requests_.load(); }
  int max_in_flight() const { return max_in_flight_.load(); }

  // Wraps a handler so it is counted (requests, overlap).
  httplib::Server::Handler counted(httplib::Server::Handler h);

  // Answers GET `path` with `body` as `content_type` after `delay_ms`, counted. Before start().
  void serve(const std::string& path, std::string body, std::string content_type, int delay_ms = 0);

 private:
  std::string host_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

}  // namespace di::recipe::image::testing
