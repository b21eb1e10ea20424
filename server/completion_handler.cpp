// Completion handler: prepare (recipe) → submit (engine) → stream SSE or answer with one JSON;
// n > 1 Chat Completions choices are joined here (ChatChoiceStream / join_chat_responses).
#include "server/completion_handler.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/chat_choices.h"
#include "server/error_response.h"
#include "server/generation.h"
#include "server/http_util.h"
#include "server/peer_probe.h"
#include "server/sse_writer.h"
#include "server/write_stall.h"

namespace di::server {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A prepare/submit failure as the client's API reports it. The recipe's rejections carry their
// own status and body ({"status", "body"} in the error's detail) and go out unchanged; engine
// refusals are mapped by status code. Internal messages stay in the log: the client gets a
// generic 500.
void send_call_error(HttpResponse& res, Protocol p, const CallError& e) {
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
    case DI_E_LIMIT: return send_error(res, server_error(p, 400, e.message, engine_limit_code(e.message)));
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

// The number of completions the request asked for (n; 1 when absent), from the accessor JSON the
// C ABI renders the prepared request's sampling parameters as.
uint32_t requested_n(const di_prepared* prepared) {
  size_t len = 0;
  const char* s = di_prepared_sampling_json(prepared, &len);
  const json j = json::parse(std::string(s, len), nullptr, false);
  if (j.is_object() && j.contains("n") && j["n"].is_number_integer() && j["n"].get<int64_t>() > 1)
    return static_cast<uint32_t>(j["n"].get<int64_t>());
  return 1;
}

}  // namespace

void handle_completion(ServerState& state, Protocol protocol, const HttpRequest& req,
                       HttpResponse& res) {
  di_prepared* raw = nullptr;
  di_error* err = nullptr;
  di_status st = di_recipe_prepare(state.recipe, c_protocol(protocol), req.body.data(),
                                   req.body.size(), &raw, &err);
  if (st != DI_OK) return send_call_error(res, protocol, take_error(st, err));
  std::unique_ptr<di_prepared, void (*)(di_prepared*)> prepared(raw, di_prepared_destroy);
  // n > 1 only comes for Chat Completions: the recipe refuses it for the APIs with one output.
  const uint32_t n = requested_n(prepared.get());

  CallError call;
  std::shared_ptr<Generation> gen = Generation::start(state.engine, prepared.get(), n, &call);
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
    // Nothing is written before the answer (its status depends on how the run ends), so a
    // client that leaves is found by probing its socket for the end of the stream.
    PeerProbe peer(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
    const Generation::Outcome o =
        gen->run({}, deadline, [&peer](std::chrono::milliseconds) { return !peer.client_gone(); }, &state.stopping);
    record(state, o);
    if (o.end == Generation::End::kClientGone) {
      // Nobody reads this; the status (nginx's 499) is for the log and the metrics.
      return send_error(res, server_error(protocol, 499, "the client closed the connection"));
    }
    int status = 200;
    if (o.end == Generation::End::kDeadline) status = 504;
    else if (o.end == Generation::End::kError) status = 500;
    if (n == 1) return send_json(res, status, gen->response_json());
    std::vector<std::string> bodies;
    for (uint32_t i = 0; i < n; ++i) bodies.push_back(gen->response_json(i));
    return send_json(res, status, join_chat_responses(bodies));
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // reverse proxies: pass events through at once
  ServerState* s = &state;
  // The provider runs on this handler's thread while the connection is open, so the socket it
  // finds stays valid for the whole stream.
  res.set_chunked_content_provider(
      "text/event-stream",
      [s, gen, deadline, local_addr = req.local_addr, local_port = req.local_port,
       remote_addr = req.remote_addr, remote_port = req.remote_port](size_t, DataSink& sink) {
        SseWriter writer([&sink](const char* d, size_t n) { return sink.write(d, n); });
        WriteStallWatch stall(find_connection_socket(local_addr, local_port, remote_addr, remote_port),
                              std::chrono::seconds(s->config.limits.write_timeout_s));
        bool write_timed_out = false;
        auto last_write = Clock::now();
        auto write_event = [&](std::string_view event, std::string_view data) {
          last_write = Clock::now();
          return writer.write_event(event, data);
        };
        // n > 1 (Chat Completions): the choices' chunks interleave on one stream.
        ChatChoiceStream choices;
        auto emit_chat = [&](std::string_view data) { return write_event("", data); };
        const bool joined = gen->num_completions() > 1;
        auto on_event = [&](uint32_t index, std::string_view event, std::string_view data) {
          if (joined) return choices.on_event(index, data, emit_chat);
          return write_event(event, data);
        };
        // While the engine is quiet (queued, long prefill), a comment each second keeps proxies
        // open and finds a client that left: writing to a closed socket fails.
        auto on_tick = [&](std::chrono::milliseconds) {
          // A client that stopped reading: what was written waits unread. Drop it after the
          // write timeout, before its unread events fill the kernel's buffers.
          if (stall.stalled()) {
            write_timed_out = true;
            return false;
          }
          if (Clock::now() - last_write < std::chrono::seconds(1)) return true;
          last_write = Clock::now();
          return writer.write_comment("ping");
        };
        const Generation::Outcome o = gen->run(on_event, deadline, on_tick, &s->stopping);
        if (joined && o.end != Generation::End::kClientGone && !choices.finish(emit_chat)) {
          Generation::Outcome gone = o;
          gone.end = Generation::End::kClientGone;
          record(*s, gone);
          return false;
        }
        record(*s, o);
        if (write_timed_out) {
          s->metrics.write_timed_out();
          current_trace().outcome = "write_timeout";
        }
        if (o.end == Generation::End::kClientGone) return false;
        sink.done();
        return true;
      },
      [gen](bool success) {
        if (!success) gen->cancel();  // the connection broke: free the KV blocks now
      });
}

}  // namespace di::server
