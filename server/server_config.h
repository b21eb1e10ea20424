// ServerConfig: what an operator sets for `deepinfer serve` — where to listen, which model and
// names to serve, the API keys, and the limits that keep one client from holding the server.
// Plain data plus validation; it starts nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace di::server {

struct ServerLimits {
  size_t max_body_bytes = 8u << 20;   // a request body over this (after de-chunking) is a 413
  int read_timeout_s = 30;            // the whole body must arrive within this (else 408)
  int header_timeout_s = 10;          // the whole request head must arrive within this (408)
  int write_timeout_s = 30;           // a client that stops reading is dropped after this
  int keep_alive_timeout_s = 5;
  double request_timeout_s = 600;     // per-request deadline: submit → last token
  size_t max_header_bytes = 32u << 10;  // request line + header fields (431 past it)
  int max_headers = 100;              // header fields (431 past it)
  int max_connections = 1024;         // open connections, all clients (503 past it)
  int max_connections_per_client = 128;  // open connections from one address (429 past it)
  int workers = 256;                  // requests handled at once; waiting heads need none
  int max_requests_per_connection = 1000;
  double shutdown_timeout_s = 10;     // SIGTERM: requests in flight get this long, then are cut
};

struct ServerConfig {
  std::string model_dir;
  std::string host = "127.0.0.1";     // loopback unless the operator says otherwise
  int port = 8000;
  std::vector<std::string> api_keys;  // empty: no authentication
  // The first is the model name responses carry; every one is accepted in requests.
  std::vector<std::string> served_model_names;
  std::string encoding;               // the recipe's prompt format; "" = the recipe's choice for the model
  int32_t log_level = 2;              // the engine's records written as JSON lines: DI_LOG_INFO and more severe
  // Images in requests: "unsupported" (the model sees a placeholder), "reject" (400) or
  // "vision" (fetched through the recipe's destination filter, decoded, counted).
  std::string image_policy = "unsupported";
  bool image_allow_remote = true;     // vision: false refuses http(s) image URLs
  // vision: internal addresses image fetches may reach after all (CIDR or host:port).
  std::vector<std::string> image_allow_destinations;
  // Without API keys, requests must name a loopback Host (or one of these) and may not come
  // from a browser page (an Origin header) unless the origin is listed in cors_origins: any
  // web page could otherwise drive a local server (CSRF, DNS rebinding).
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> cors_origins;  // origins answered with CORS headers ("" none)
  nlohmann::json engine_options = nlohmann::json::object();  // engine-scope di_options keys
  ServerLimits limits;

  // Checks ranges and fills defaults (served name = the model folder's name).
  Status validate();
};

}  // namespace di::server
