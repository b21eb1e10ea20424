// LocalHttpServer: start/stop, the request counters and fixed answers.
#include "local_http_server.h"

#include <chrono>

namespace di::recipe::image::testing {

LocalHttpServer::LocalHttpServer(std::string host) : host_(std::move(host)) {
  server_.new_task_queue = [] { return new httplib::ThreadPool(16); };
}

LocalHttpServer::~LocalHttpServer() {
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

void LocalHttpServer::start() {
  port_ = server_.bind_to_any_port(host_);
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  for (int i = 0; i < 500 && !server_.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string LocalHttpServer::url(const std::string& path) const {
  return "http://" + host_ + ":" + std::to_string(port_) + path;
}

httplib::Server::Handler LocalHttpServer::counted(httplib::Server::Handler h) {
  return [this, h](const httplib::Request& req, httplib::Response& res) {
    requests_.fetch_add(1);
    const int now = in_flight_.fetch_add(1) + 1;
    int prev = max_in_flight_.load();
    while (now > prev && !max_in_flight_.compare_exchange_weak(prev, now)) {
    }
    h(req, res);
    in_flight_.fetch_sub(1);
  };
}

void LocalHttpServer::serve(const std::string& path, std::string body, std::string content_type, int delay_ms) {
  server_.Get(path, counted([body = std::move(body), content_type = std::move(content_type), delay_ms](
                                const httplib::Request&, httplib::Response& res) {
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    res.set_content(body, content_type);
  }));
}

}  // namespace di::recipe::image::testing
