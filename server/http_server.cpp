// HttpServer: engine + recipe lifetime, the httplib server's limits, routes, auth and logging.
#include "server/http_server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "server/completion_handler.h"
#include "server/completions_handler.h"
#include "server/error_response.h"
#include "server/generation.h"
#include "server/http_util.h"
#include "server/info_handlers.h"
#include "server/server_state.h"

namespace di::server {

RequestTrace& current_trace() {
  thread_local RequestTrace trace;
  return trace;
}

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

Status status_from(const CallError& e, const std::string& what) {
  const std::string m = what + ": " + e.message;
  switch (e.status) {
    case DI_E_NOT_FOUND: return Status::not_found(m);
    case DI_E_INVALID_ARG: return Status::invalid_argument(m);
    case DI_E_PARSE: return Status::parse(m);
    case DI_E_UNSUPPORTED: return Status::unsupported(m);
    case DI_E_IO: return Status::io(m);
    case DI_E_LIMIT: return Status::limit(m);
    case DI_E_OOM: return Status::out_of_memory(m);
    default: return Status::internal(m);
  }
}

// Request ids: random per process start, then counted, so ids never repeat within a run and
// do not reveal how many requests other clients made before the server restarted.
std::string next_request_id() {
  static const uint64_t base = std::random_device{}() * 0x9E3779B97F4A7C15ull;
  static std::atomic<uint64_t> counter{0};
  char buf[40];
  std::snprintf(buf, sizeof buf, "req_%016llx", static_cast<unsigned long long>(base + counter.fetch_add(1)));
  return buf;
}

}  // namespace

struct HttpServer::Impl {
  explicit Impl(ServerConfig c) : state(std::move(c)) {}
  ~Impl() {
    di_recipe_destroy(state.recipe);
    di_engine_destroy(state.engine);
  }

  Status load();
  void configure();
  // Wraps a handler with the API-key check and the route name for logs and metrics.
  httplib::Server::Handler guarded(const char* route, bool needs_key,
                                   std::function<void(const httplib::Request&, httplib::Response&)> fn);

  ServerState state;
  httplib::Server http;
};

Status HttpServer::Impl::load() {
  const ServerConfig& c = state.config;
  di_error* err = nullptr;
  di_options* opts = nullptr;
  di_options_create(&opts, nullptr);
  const std::string engine_json = c.engine_options.dump();
  di_status st = di_options_update_json(opts, engine_json.data(), engine_json.size(), &err);
  if (st == DI_OK) st = di_engine_create(c.model_dir.data(), c.model_dir.size(), opts, &state.engine, &err);
  di_options_destroy(opts);
  if (st != DI_OK) return status_from(take_error(st, err), "loading " + c.model_dir);

  // The recipe's context budget is the engine's max_model_len, so max_tokens left open by a
  // client is filled with what the engine will accept.
  char* info = nullptr;
  size_t len = 0;
  int64_t max_model_len = 0;
  if (di_engine_info(state.engine, &info, &len, nullptr) == DI_OK) {
    const json j = json::parse(std::string(info, len), nullptr, false);
    di_free(info);
    if (j.is_object() && j.contains("limits")) max_model_len = j["limits"].value("max_model_len", int64_t{0});
  }
  json aliases = json::array();
  for (size_t i = 1; i < c.served_model_names.size(); ++i) aliases.push_back(c.served_model_names[i]);
  json recipe_options = {{"recipe_encoding", c.encoding},
                         {"recipe_model", c.served_model_names.front()},
                         {"recipe_model_aliases", aliases},
                         {"recipe_image_policy", c.image_policy}};
  // The fetch options exist only for a vision recipe (the recipe refuses them otherwise).
  if (c.image_policy == "vision") {
    recipe_options["recipe_image_allow_remote"] = c.image_allow_remote ? 1 : 0;
    recipe_options["recipe_image_allow_destinations"] = c.image_allow_destinations;
  }
  if (max_model_len > 0) recipe_options["recipe_context_length"] = max_model_len;
  const std::string rj = recipe_options.dump();
  di_options_create(&opts, nullptr);
  st = di_options_update_json(opts, rj.data(), rj.size(), &err);
  if (st == DI_OK) st = di_recipe_create(c.model_dir.data(), c.model_dir.size(), opts, &state.recipe, &err);
  di_options_destroy(opts);
  if (st != DI_OK) return status_from(take_error(st, err), "recipe for " + c.model_dir);
  state.created_unix = static_cast<int64_t>(std::time(nullptr));
  return Status::ok();
}

httplib::Server::Handler HttpServer::Impl::guarded(
    const char* route, bool needs_key, std::function<void(const httplib::Request&, httplib::Response&)> fn) {
  return [this, route, needs_key, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
    current_trace().route = route;
    if (needs_key && !state.auth.allows(req.get_header_value("Authorization"),
                                        req.get_header_value("x-api-key"))) {
      const recipe::Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
      const bool presented = req.has_header("Authorization") || req.has_header("x-api-key");
      res.set_header("WWW-Authenticate", "Bearer");
      return send_error(res, server_error(p, 401,
                                          presented ? "Incorrect API key provided."
                                                    : "Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`.",
                                          "invalid_api_key"));
    }
    fn(req, res);
  };
}

void HttpServer::Impl::configure() {
  const ServerLimits& l = state.config.limits;
  const size_t threads = static_cast<size_t>(l.max_connections);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(l.max_body_bytes);
  http.set_read_timeout(l.read_timeout_s, 0);
  http.set_write_timeout(l.write_timeout_s, 0);
  http.set_keep_alive_timeout(l.keep_alive_timeout_s);
  http.set_tcp_nodelay(true);  // SSE events are small: send each at once

  http.set_pre_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    RequestTrace& t = current_trace();
    t = RequestTrace{};
    t.start = Clock::now();
    t.counted = true;
    state.metrics.request_started();
    t.request_id = next_request_id();
    res.set_header("x-request-id", t.request_id);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Requests nothing routed (404, 405) or that httplib refused before routing (413 body too
  // large, 400 malformed): give them a body in the client's API format.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const recipe::Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
    std::string message = "request failed";
    if (res.status == 404) message = "no route for " + req.method + " " + req.path;
    else if (res.status == 413) message = "request body too large";
    else if (res.status == 400) message = "malformed HTTP request";
    else if (res.status >= 500) message = "internal error";
    send_error(res, server_error(p, res.status, message));
    return httplib::Server::HandlerResponse::Handled;
  }));
  // A handler that throws (a bug, or out of memory) becomes a plain 500; no trace reaches the
  // client, the log gets the message.
  http.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    state.log.error("handler_exception", {{"request_id", current_trace().request_id}, {"path", req.path},
                                          {"message", what}});
    const recipe::Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
    send_error(res, server_error(p, 500, "internal error"));
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    RequestTrace& t = current_trace();
    // A request httplib refused before routing (malformed) never started a trace.
    const double secs = t.counted ? std::chrono::duration<double>(Clock::now() - t.start).count() : 0.0;
    const std::string route = t.route.empty() ? "unmatched" : t.route;
    state.metrics.request_finished(route, res.status, secs, t.counted);
    json f = {{"request_id", t.request_id}, {"method", req.method}, {"path", req.path},
              {"route", route}, {"status", res.status}, {"duration_ms", secs * 1000.0},
              {"remote", req.remote_addr}};
    if (t.engine_request != 0) {
      f["engine_request"] = t.engine_request;
      f["stream"] = t.stream;
      f["prompt_tokens"] = t.prompt_tokens;
      f["cached_prompt_tokens"] = t.cached_prompt_tokens;
      f["completion_tokens"] = t.completion_tokens;
      f["finish_reason"] = t.finish_reason;
    }
    if (!t.outcome.empty()) f["outcome"] = t.outcome;
    if (!t.error.empty()) f["error"] = t.error;
    state.log.write(res.status >= 500 ? "error" : "info", "request", f);
    t = RequestTrace{};
  });

  auto api = [this](const char* route, recipe::Protocol p) {
    return guarded(route, true, [this, p](const httplib::Request& req, httplib::Response& res) {
      handle_completion(state, p, req, res);
    });
  };
  http.Post("/v1/chat/completions", api("/v1/chat/completions", recipe::Protocol::kChatCompletions));
  http.Post("/v1/responses", api("/v1/responses", recipe::Protocol::kResponses));
  http.Post("/v1/messages", api("/v1/messages", recipe::Protocol::kMessages));
  http.Post("/v1/completions", guarded("/v1/completions", true, [this](const httplib::Request& q, httplib::Response& r) {
              handle_legacy_completion(state, q, r);
            }));
  http.Get("/v1/models", guarded("/v1/models", true, [this](const httplib::Request& q, httplib::Response& r) {
             handle_models(state, q, r);
           }));
  http.Get(R"(/v1/models/([^/]+))", guarded("/v1/models/{id}", true, [this](const httplib::Request& q, httplib::Response& r) {
             handle_model(state, q, r);
           }));
  http.Get("/health", guarded("/health", false, [this](const httplib::Request& q, httplib::Response& r) {
             handle_health(state, q, r);
           }));
  http.Get("/metrics", guarded("/metrics", false, [this](const httplib::Request& q, httplib::Response& r) {
             handle_metrics(state, q, r);
           }));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerConfig config) {
  DI_RETURN_IF_ERROR(config.validate());
  auto impl = std::make_unique<Impl>(std::move(config));
  DI_RETURN_IF_ERROR(impl->load());
  impl->configure();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Result<int> HttpServer::bind() {
  const ServerConfig& c = impl_->state.config;
  int port = c.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(c.host);
    if (port <= 0) return Status::io("cannot listen on " + c.host + " (any port)");
  } else if (!impl_->http.bind_to_port(c.host, port)) {
    return Status::io("cannot listen on " + c.host + ":" + std::to_string(port) + " (in use, or no such address)");
  }
  json f = {{"host", c.host}, {"port", port}, {"models", c.served_model_names},
            {"auth", impl_->state.auth.enabled()}};
  impl_->state.log.info("listening", f);
  return port;
}

Status HttpServer::serve() {
  if (!impl_->http.listen_after_bind()) {
    if (impl_->state.stopping.load()) return Status::ok();
    return Status::io("the listener stopped unexpectedly");
  }
  return Status::ok();
}

void HttpServer::stop() {
  impl_->state.stopping.store(true);
  impl_->http.stop();
}

}  // namespace di::server
