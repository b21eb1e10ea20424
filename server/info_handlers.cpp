// Models, health and metrics.
#include "server/info_handlers.h"

#include <ctime>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "server/error_response.h"
#include "server/http_util.h"

namespace di::server {
namespace {

using nlohmann::json;

json model_entry(const ServerState& state, const std::string& name) {
  char created_at[32] = "";
  const std::time_t t = static_cast<std::time_t>(state.created_unix);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(created_at, sizeof created_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return {{"id", name},           {"object", "model"},     {"created", state.created_unix},
          {"owned_by", "deepinfer"}, {"type", "model"}, {"display_name", name},
          {"created_at", created_at}};
}

std::string engine_metrics(di_engine* engine, int32_t format) {
  char* out = nullptr;
  size_t len = 0;
  if (di_engine_metrics(engine, format, &out, &len, nullptr) != DI_OK) return "";
  std::string s(out, len);
  di_free(out);
  return s;
}

}  // namespace

void handle_models(ServerState& state, const HttpRequest&, HttpResponse& res) {
  json data = json::array();
  for (const std::string& n : state.config.served_model_names) data.push_back(model_entry(state, n));
  const json body = {{"object", "list"},
                     {"data", data},
                     {"has_more", false},
                     {"first_id", state.config.served_model_names.front()},
                     {"last_id", state.config.served_model_names.back()}};
  send_json(res, 200, body.dump());
}

void handle_model(ServerState& state, const HttpRequest& req, HttpResponse& res) {
  const std::string id = req.matches.size() > 1 ? req.matches[1] : "";
  for (const std::string& n : state.config.served_model_names)
    if (n == id) return send_json(res, 200, model_entry(state, n).dump());
  const Protocol p = protocol_for(req.path, req.has_header("anthropic-version"));
  send_error(res, server_error(p, 404, "The model '" + id + "' does not exist", "model_not_found"));
}

void handle_health(ServerState& state, const HttpRequest&, HttpResponse& res) {
  if (state.stopping.load()) return send_json(res, 503, R"({"status":"stopping"})");
  send_json(res, 200, R"({"status":"ok"})");
}

void handle_metrics(ServerState& state, const HttpRequest&, HttpResponse& res) {
  std::string text = state.metrics.to_prometheus();
  const std::string prom = engine_metrics(state.engine, 1);
  text += prom;
  // KV blocks as counts (the engine's exposition has only their ratio): what a dashboard, and
  // the disconnect test, need to see blocks come back.
  const json j = json::parse(engine_metrics(state.engine, 0), nullptr, false);
  if (j.is_object()) {
    std::ostringstream o;
    auto gauge = [&](const char* key, const char* help) {
      const std::string name = std::string("deepinfer_") + key;
      if (!j.contains(key) || prom.find(name + " ") != std::string::npos) return;
      o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n"
        << name << ' ' << j[key].dump() << '\n';
    };
    gauge("kv_blocks_total", "KV blocks in the pool.");
    gauge("kv_blocks_free", "KV blocks free (cached prefix blocks count as free).");
    gauge("kv_blocks_cached", "Free KV blocks that still hold a cached prefix.");
    text += o.str();
  }
  res.status = 200;
  res.set_content(text, "text/plain; version=0.0.4");
}

}  // namespace di::server
