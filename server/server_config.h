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
  size_t max_body_bytes = 8u << 20;   // a request body over this is a 413
  int read_timeout_s = 30;            // headers and body must arrive within this
  int write_timeout_s = 30;           // a client that stops reading is dropped after this
  int keep_alive_timeout_s = 5;
  double request_timeout_s = 600;     // per-request deadline: submit → last token
  int max_connections = 256;          // worker threads; each open connection holds one
};

struct ServerConfig {
  std::string model_dir;
  std::string host = "127.0.0.1";     // loopback unless the operator says otherwise
  int port = 8000;
  std::vector<std::string> api_keys;  // empty: no authentication
  // The first is the model name responses carry; every one is accepted in requests.
  std::vector<std::string> served_model_names;
  std::string encoding = "dsv4";      // the recipe's prompt format
  // Images in requests: "unsupported" (the model sees a placeholder), "reject" (400) or
  // "vision" (fetched through the recipe's destination filter, decoded, counted).
  std::string image_policy = "unsupported";
  bool image_allow_remote = true;     // vision: false refuses http(s) image URLs
  // vision: internal addresses image fetches may reach after all (CIDR or host:port).
  std::vector<std::string> image_allow_destinations;
  nlohmann::json engine_options = nlohmann::json::object();  // engine-scope di_options keys
  ServerLimits limits;

  // Checks ranges and fills defaults (served name = the model folder's name).
  Status validate();
};

}  // namespace di::server
