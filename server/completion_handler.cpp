// Completion handler: prepare (recipe) → submit (engine) → stream SSE or answer with one JSON.
#include "server/completion_handler.h"

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "server/error_response.h"
#include "server/generation.h"
#include "server/http_util.h"
#include "server/sse_writer.h"

namespace di::server {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A prepare/submit failure as the client's API reports it. The recipe's rejections carry their
// own status and body ({"status", "body"} in the error's detail) and go out unchanged; engine
// refusals are mapped by status code. Internal messages stay in the log: the client gets a
// generic 500.
void send_call_error(httplib::Response& res, recipe::Protocol p, const CallError& e) {
  if (!e.detail.empty()) {
    const json d = json::parse(e.detail, nullptr, false);
    if (d.is_object() && d.contains("status") && d["status"].is_number_integer() && d.contains("body") &&
        d["body"].is_object()) {
      current_trace().outcome = "rejected";
      current_trace().error = e.message;
      return send_json(res, d["status"].get<int>(), d["body"].dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  switch (e.status) {
    case DI_E_INVALID_ARG:
    case DI_E_PARSE: return send_error(res, server_error(p, 400, e.message));
    case DI_E_NOT_FOUND: return send_error(res, server_error(p, 404, e.message, "model_not_found"));
    case DI_E_LIMIT: return send_error(res, server_error(p, 400, e.message, "context_length_exceeded"));
    case DI_E_UNSUPPORTED: return send_error(res, server_error(p, 400, e.message, "unsupported"));
    case DI_E_PERMISSION: return send_error(res, server_error(p, 403, e.message));
    case DI_E_STATE:
    case DI_E_OOM: return send_error(res, server_error(p, 503, "the engine cannot take requests now; retry later"));
    default: return send_error(res, server_error(p, 500, "internal error"));
  }
}

const char* end_name(Generation::End e) {
  switch (e) {
    case Generation::End::kFinished: return "finished";
    case Generation::End::kClientGone: return "client_gone";
    case Generation::End::kDeadline: return "deadline";
    case Generation::End::kError: return "error";
  }
  return "finished";
}

void record(ServerState& state, const Generation::Outcome& o) {
  RequestTrace& t = current_trace();
  t.outcome = end_name(o.end);
  t.prompt_tokens = o.prompt_tokens;
  t.cached_prompt_tokens = o.cached_prompt_tokens;
  t.completion_tokens = o.completion_tokens;
  t.finish_reason = o.finish_reason;
  if (!o.error.empty()) t.error = o.error;
  state.metrics.tokens(o.prompt_tokens, o.cached_prompt_tokens, o.completion_tokens);
  if (o.end == Generation::End::kClientGone) state.metrics.client_disconnected();
  if (o.end == Generation::End::kDeadline) state.metrics.deadline_exceeded();
}

// The sampling options the server cannot honour through one parser per request.
std::string unsupported_sampling(const di_prepared* prepared) {
  size_t len = 0;
  const char* s = di_prepared_sampling_json(prepared, &len);
  const json j = json::parse(std::string(s, len), nullptr, false);
  if (j.is_object() && j.contains("n") && j["n"].is_number_integer() && j["n"].get<int64_t>() > 1)
    return "n: this server returns one choice per request; got " + j["n"].dump();
  return "";
}

}  // namespace

void handle_completion(ServerState& state, recipe::Protocol protocol, const httplib::Request& req,
                       httplib::Response& res) {
  di_prepared* raw = nullptr;
  di_error* err = nullptr;
  di_status st = di_recipe_prepare(state.recipe, c_protocol(protocol), req.body.data(),
                                   req.body.size(), &raw, &err);
  if (st != DI_OK) return send_call_error(res, protocol, take_error(st, err));
  std::unique_ptr<di_prepared, void (*)(di_prepared*)> prepared(raw, di_prepared_destroy);
  if (std::string why = unsupported_sampling(prepared.get()); !why.empty()) {
    recipe::ApiError e = server_error(protocol, 400, why);
    e.param = "n";
    return send_error(res, e);
  }

  CallError call;
  std::shared_ptr<Generation> gen = Generation::start(state.engine, prepared.get(), &call);
  if (!gen) {
    if (call.detail.empty() && (call.status == DI_E_INTERNAL || call.status == DI_E_DEVICE || call.status == DI_E_IO))
      state.log.error("submit_failed", {{"request_id", current_trace().request_id}, {"message", call.message}});
    return send_call_error(res, protocol, call);
  }
  RequestTrace& trace = current_trace();
  trace.engine_request = gen->request_id();
  trace.stream = di_prepared_stream(prepared.get()) != 0;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(state.config.limits.request_timeout_s));

  if (!trace.stream) {
    const Generation::Outcome o = gen->run({}, deadline, {}, &state.stopping);
    record(state, o);
    int status = 200;
    if (o.end == Generation::End::kDeadline) status = 504;
    else if (o.end == Generation::End::kError) status = 500;
    return send_json(res, status, gen->response_json());
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // reverse proxies: pass events through at once
  ServerState* s = &state;
  res.set_chunked_content_provider(
      "text/event-stream",
      [s, gen, deadline](size_t, httplib::DataSink& sink) {
        SseWriter writer([&sink](const char* d, size_t n) { return sink.write(d, n); });
        auto last_write = Clock::now();
        auto on_event = [&](std::string_view event, std::string_view data) {
          last_write = Clock::now();
          return writer.write_event(event, data);
        };
        // While the engine is quiet (queued, long prefill), a comment each second keeps proxies
        // open and finds a client that left: writing to a closed socket fails.
        auto on_idle = [&](std::chrono::milliseconds) {
          if (Clock::now() - last_write < std::chrono::seconds(1)) return true;
          last_write = Clock::now();
          return writer.write_comment("ping");
        };
        const Generation::Outcome o = gen->run(on_event, deadline, on_idle, &s->stopping);
        record(*s, o);
        if (o.end == Generation::End::kClientGone) return false;
        sink.done();
        return true;
      },
      [gen](bool success) {
        if (!success) gen->cancel();  // the connection broke: free the KV blocks now
      });
}

}  // namespace di::server
