// HttpServer: engine + recipe lifetime, routes, auth, the keyless request policy and logging,
// on HttpListener (server/http/). cpp-httplib 0.11 was replaced: it reads a whole body (chunked
// or not) before any handler sees the headers, so neither the key nor the size limit could be
// checked first; it has per-read timeouts only (no deadline for a head), one thread per
// connection (slow clients exhaust them), no header count limit and lax framing.
#include "server/http_server.h"

#include "server/engine_log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <regex>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "server/completion_handler.h"
#include "server/completions_handler.h"
#include "server/error_response.h"
#include "server/generation.h"
#include "server/http_util.h"
#include "server/http/http_listener.h"
#include "server/info_handlers.h"
#include "server/request_policy.h"
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

struct Route {
  std::string method;
  std::regex pattern;
  const char* name;  // for logs and metrics
  bool needs_key;
  bool json_body;
  std::function<void(HttpRequest&, HttpResponse&)> handle;
};

struct HttpServer::Impl {
  explicit Impl(ServerConfig c) : state(std::move(c)) {}
  ~Impl() {
    di_recipe_destroy(state.recipe);
    di_engine_destroy(state.engine);
    restore_engine_log();  // state.log goes with this object
  }

  Status load();
  void configure();
  bool admit(HttpRequest& req, HttpResponse& res);
  void log_request(const HttpRequest& req, const HttpResponse& res);

  ServerState state;
  RequestPolicy policy;
  std::vector<Route> routes;
  thread_local static const Route* current_route;
  std::unique_ptr<http::HttpListener> listener;
};

thread_local const Route* HttpServer::Impl::current_route = nullptr;

Status HttpServer::Impl::load() {
  const ServerConfig& c = state.config;
  di_error* err = nullptr;
  di_options* opts = nullptr;
  route_engine_log(&state.log, c.log_level);
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
  json recipe_options = {{"recipe_model", c.served_model_names.front()},
                         {"recipe_model_aliases", aliases},
                         {"recipe_image_policy", c.image_policy}};
  if (!c.encoding.empty()) recipe_options["recipe_encoding"] = c.encoding;
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

// Everything decided from the head, before a body byte is read: the route, the key, then the
// keyless policy. A refusal closes the connection (its body, if any, stays unread).
bool HttpServer::Impl::admit(HttpRequest& req, HttpResponse& res) {
  const Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
  current_route = nullptr;
  bool path_known = false;
  std::smatch m;
  for (const Route& r : routes) {
    if (!std::regex_match(req.path, m, r.pattern)) continue;
    path_known = true;
    if (r.method != req.method) continue;
    current_route = &r;
    req.matches.clear();
    for (const auto& g : m) req.matches.push_back(g.str());
    break;
  }
  if (current_route == nullptr) {
    if (req.method == "OPTIONS" && path_known && req.has_header("Origin") &&
        policy.cors_allows(req.get_header_value("Origin"))) {
      // A CORS preflight from a listed origin.
      current_trace().route = "preflight";
      res.status = 204;
      res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
      res.set_header("Access-Control-Allow-Methods", "GET, POST");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, x-api-key, anthropic-version");
      res.set_header("Access-Control-Max-Age", "600");
      res.set_header("Vary", "Origin");
      return false;
    }
    const int status = path_known ? 405 : 404;
    send_error(res, server_error(p, status, (path_known ? "method not allowed: " : "no route for ") + req.method +
                                                " " + req.path));
    return false;
  }
  const Route& r = *current_route;
  current_trace().route = r.name;
  if (r.needs_key && !state.auth.allows(req.get_header_value("Authorization"), req.get_header_value("x-api-key"))) {
    const bool presented = req.has_header("Authorization") || req.has_header("x-api-key");
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, server_error(p, 401,
                                 presented ? "Incorrect API key provided."
                                           : "Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`.",
                                 "invalid_api_key"));
    return false;
  }
  int status = 0;
  const std::string why = policy.refusal(req.get_header_value("Host"), req.has_header("Origin"),
                                         req.get_header_value("Origin"), r.json_body,
                                         req.get_header_value("Content-Type"), &status);
  if (!why.empty()) {
    send_error(res, server_error(p, status, why,
                                 status == 415 ? "unsupported_media_type" : status == 400 ? "invalid_host" : "forbidden_origin"));
    return false;
  }
  if (req.has_header("Origin") && policy.cors_allows(req.get_header_value("Origin"))) {
    res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
    res.set_header("Vary", "Origin");
  }
  return true;
}

void HttpServer::Impl::log_request(const HttpRequest& req, const HttpResponse& res) {
  RequestTrace& t = current_trace();
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
}

void HttpServer::Impl::configure() {
  const ServerConfig& c = state.config;
  const ServerLimits& l = c.limits;
  policy.keyless = !state.auth.enabled();
  for (const std::string& h : c.allowed_hosts) policy.allowed_hosts.push_back(host_of(h).empty() ? h : host_of(h));
  policy.cors_origins = c.cors_origins;

  auto api = [this](Protocol p) {
    return [this, p](HttpRequest& req, HttpResponse& res) { handle_completion(state, p, req, res); };
  };
  routes.push_back({"POST", std::regex("/v1/chat/completions"), "/v1/chat/completions", true, true,
                    api(Protocol::kChatCompletions)});
  routes.push_back({"POST", std::regex("/v1/responses"), "/v1/responses", true, true, api(Protocol::kResponses)});
  routes.push_back({"POST", std::regex("/v1/messages"), "/v1/messages", true, true, api(Protocol::kMessages)});
  routes.push_back({"POST", std::regex("/v1/completions"), "/v1/completions", true, true,
                    [this](HttpRequest& q, HttpResponse& r) { handle_legacy_completion(state, q, r); }});
  routes.push_back({"GET", std::regex("/v1/models"), "/v1/models", true, false,
                    [this](HttpRequest& q, HttpResponse& r) { handle_models(state, q, r); }});
  routes.push_back({"GET", std::regex("/v1/models/([^/]+)"), "/v1/models/{id}", true, false,
                    [this](HttpRequest& q, HttpResponse& r) { handle_model(state, q, r); }});
  routes.push_back({"GET", std::regex("/health"), "/health", false, false,
                    [this](HttpRequest& q, HttpResponse& r) { handle_health(state, q, r); }});
  routes.push_back({"GET", std::regex("/metrics"), "/metrics", false, false,
                    [this](HttpRequest& q, HttpResponse& r) { handle_metrics(state, q, r); }});

  http::ListenerLimits ll;
  ll.head.max_head_bytes = l.max_header_bytes;
  ll.head.max_headers = static_cast<size_t>(l.max_headers);
  ll.max_body_bytes = l.max_body_bytes;
  ll.head_timeout = std::chrono::milliseconds(int64_t{l.header_timeout_s} * 1000);
  ll.body_timeout = std::chrono::milliseconds(int64_t{l.read_timeout_s} * 1000);
  ll.write_timeout = std::chrono::milliseconds(int64_t{l.write_timeout_s} * 1000);
  ll.keep_alive_timeout = std::chrono::milliseconds(int64_t{l.keep_alive_timeout_s} * 1000);
  ll.max_connections = l.max_connections;
  ll.max_connections_per_client = l.max_connections_per_client;
  ll.workers = l.workers;
  ll.max_requests_per_connection = l.max_requests_per_connection;

  http::Hooks hooks;
  hooks.begin = [this](const HttpRequest&, HttpResponse& res) {
    RequestTrace& t = current_trace();
    t = RequestTrace{};
    t.start = Clock::now();
    t.counted = true;
    state.metrics.request_started();
    t.request_id = next_request_id();
    res.set_header("x-request-id", t.request_id);
  };
  hooks.admit = [this](HttpRequest& req, HttpResponse& res) { return admit(req, res); };
  // A handler that throws (a bug, or out of memory) becomes a plain 500; no trace reaches the
  // client, the log gets the message.
  hooks.handle = [this](HttpRequest& req, HttpResponse& res) {
    try {
      current_route->handle(req, res);
    } catch (const std::exception& e) {
      state.log.error("handler_exception", {{"request_id", current_trace().request_id}, {"path", req.path},
                                            {"message", e.what()}});
      res.provider = nullptr;
      send_error(res, server_error(protocol_for(req.path, req.has_header("anthropic-version")), 500, "internal error"));
    }
  };
  // Errors of the HTTP layer itself (framing, limits, timeouts) in the client's API format.
  hooks.error_body = [](const HttpRequest& req, HttpResponse& res, const std::string& message) {
    const Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
    std::string code;
    switch (res.status) {
      case 408: code = "request_timeout"; break;
      case 411: code = "length_required"; break;
      case 413: code = "request_too_large"; break;
      case 415: code = "unsupported_media_type"; break;
      case 429: code = "too_many_connections"; break;
      case 431: code = "headers_too_large"; break;
      case 503: code = "server_busy"; break;
      default: code = res.status < 500 ? "malformed_http_request" : "";
    }
    send_error(res, server_error(p, res.status, message, code));
  };
  hooks.end = [this](const HttpRequest& req, const HttpResponse& res) { log_request(req, res); };
  hooks.refused = [this](int status, const std::string& message, const std::string& remote) {
    state.metrics.request_finished("unmatched", status, 0.0, false);
    state.log.write("info", "refused", {{"status", status}, {"error", message}, {"remote", remote}});
    current_trace() = RequestTrace{};
  };
  listener = std::make_unique<http::HttpListener>(ll, std::move(hooks));
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
  DI_ASSIGN_OR_RETURN(int port, impl_->listener->bind(c.host, c.port));
  json f = {{"host", c.host}, {"port", port}, {"models", c.served_model_names},
            {"auth", impl_->state.auth.enabled()}};
  impl_->state.log.info("listening", f);
  return port;
}

Status HttpServer::serve() { return impl_->listener->serve(); }

void HttpServer::stop() {
  impl_->state.stopping.store(true);
  impl_->listener->stop(std::chrono::milliseconds(
      static_cast<int64_t>(impl_->state.config.limits.shutdown_timeout_s * 1000)));
}

}  // namespace di::server
