// HttpServer: `deepinfer serve` — loads the engine and recipe for one model folder and answers
// the OpenAI / Anthropic HTTP APIs on them. Owns routing, auth, limits and the per-request log;
// what each endpoint does lives in its handler file.
//
// server/ is a client of the C ABI, as a binding is: it includes deepinfer.h, base/ (stateless
// helpers) and its own files, never recipe/, engine/ or capi/src/, and it links libdeepinfer.so
// (one copy of the recipe and the engine in the process). Protocol and ApiError are therefore its
// own (error_response.h). tests/abi/check_layers.sh enforces the include rule.
#pragma once

#include <memory>

#include "base/status.h"
#include "server/server_config.h"

namespace di::server {

class HttpServer {
 public:
  // Validates `config`, loads the model (engine) and its recipe.
  static Result<std::unique_ptr<HttpServer>> create(ServerConfig config);
  ~HttpServer();

  // Binds the listening socket; returns the port (an ephemeral one when config.port is 0).
  Result<int> bind();
  // Serves until stop(); returns when the listener has closed.
  Status serve();
  // Stops accepting, ends running generations (their clients get the API's error) and makes
  // serve() return once every connection's worker has finished. Safe from another thread.
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace di::server
