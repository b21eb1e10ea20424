// HttpListener: a strict HTTP/1.1 server over TCP sockets. One event-loop thread accepts
// connections and reads request heads (so a slow or idle client costs a descriptor and a buffer,
// not a worker); a fixed pool of workers checks each complete head, reads its body, runs the
// handler and writes the response. Every limit is applied before the body is read. Knows
// nothing of the APIs: routing, keys and error bodies come through Hooks.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "server/http/http_message.h"
#include "server/http/request_head.h"

namespace di::server::http {

struct ListenerLimits {
  HeadLimits head;
  uint64_t max_body_bytes = 8u << 20;                    // after de-chunking (413 past it)
  std::chrono::milliseconds head_timeout{10000};         // the whole request head (408 past it)
  std::chrono::milliseconds body_timeout{30000};         // the whole body (408 past it)
  std::chrono::milliseconds write_timeout{30000};        // one write waiting on the client
  std::chrono::milliseconds keep_alive_timeout{5000};    // idle between requests
  int max_connections = 1024;                            // open at once, all clients (503 past it)
  int max_connections_per_client = 128;                  // open at once from one address (429)
  int workers = 256;                                     // requests handled at once
  int max_requests_per_connection = 1000;                // then the connection is closed
};

struct Hooks {
  // Runs on the worker, first, for every request whose head parsed: set up the request's log
  // trace, add response headers every answer carries.
  std::function<void(const HttpRequest&, HttpResponse&)> begin;
  // Decides from the head alone (req.body is empty): route, key, Host/Origin policy. False:
  // `res` is the answer, the body is never read and the connection closes after it.
  std::function<bool(HttpRequest&, HttpResponse&)> admit;
  // The routed handler, with the body read.
  std::function<void(HttpRequest&, HttpResponse&)> handle;
  // An error the HTTP layer itself raises (status already in res.status): fill the body.
  std::function<void(const HttpRequest&, HttpResponse&, const std::string& message)> error_body;
  // After each answered request (not for connections refused before a head parsed).
  std::function<void(const HttpRequest&, const HttpResponse&)> end;
  // A connection refused before any head parsed (limits, malformed head, slow head): for logs.
  std::function<void(int status, const std::string& message, const std::string& remote)> refused;
};

class HttpListener {
 public:
  HttpListener(ListenerLimits limits, Hooks hooks);
  ~HttpListener();

  // Listens on host:port (port 0: an ephemeral one); returns the port.
  Result<int> bind(const std::string& host, int port);
  // Serves until stop(); returns once every worker has finished.
  Status serve();
  // Stops accepting and closes idle and half-received connections at once; requests being
  // handled get `grace` to finish, then their sockets are shut down so that every worker
  // returns. Safe from any thread.
  void stop(std::chrono::milliseconds grace);

  // Open connections now (for tests and metrics).
  int open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace di::server::http
