// Legacy completions: parse → tokenize → di_submit → poll, folding chunks in CompletionsOutput.
#include "server/completions_handler.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/completions_output.h"
#include "server/completions_request.h"
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
constexpr Protocol kOpenAI = Protocol::kChatCompletions;  // OpenAI's error shape
constexpr int32_t kPollMs = 50;

using TokenizerPtr = std::unique_ptr<di_tokenizer, void (*)(di_tokenizer*)>;
using RequestPtr = std::unique_ptr<di_request, void (*)(di_request*)>;

ApiError call_error(const CallError& e) {
  switch (e.status) {
    case DI_E_INVALID_ARG:
    case DI_E_PARSE:
    case DI_E_UNSUPPORTED: return server_error(kOpenAI, 400, e.message);
    case DI_E_LIMIT: return server_error(kOpenAI, 400, e.message, engine_limit_code(e.message));
    case DI_E_STATE:
    case DI_E_OOM: return server_error(kOpenAI, 503, "the engine cannot take requests now; retry later");
    default: return server_error(kOpenAI, 500, "internal error");
  }
}

// How a run ended.
enum class End { kFinished, kClientGone, kDeadline, kStopping, kError };

// Polls `request` until its last chunk, handing each to `on_chunk` (false: the client is gone);
// `on_tick` runs about every poll interval (false: the client is gone).
template <typename OnChunk, typename OnTick>
End poll_until_done(di_request* request, Clock::time_point deadline, const std::atomic<bool>& stopping,
                    OnChunk&& on_chunk, OnTick&& on_tick, std::string* error) {
  for (;;) {
    if (Clock::now() >= deadline) return End::kDeadline;
    if (stopping.load()) return End::kStopping;
    if (!on_tick()) return End::kClientGone;
    di_chunk c{};
    c.struct_size = sizeof(c);
    di_error* err = nullptr;
    const di_status st = di_poll_chunk(request, kPollMs, &c, &err);
    if (st == DI_TIMEOUT) continue;
    if (st == DI_END_OF_STREAM) return End::kFinished;
    if (st != DI_OK) {
      *error = take_error(st, err).message;
      return End::kError;
    }
    if (c.finish_reason == DI_FINISH_ERROR) *error = std::string(c.error_message, c.error_message_len);
    if (!on_chunk(c)) return End::kClientGone;
    if (c.is_final) return error->empty() ? End::kFinished : End::kError;
  }
}

void record(ServerState& state, End end, const json& usage, const std::string& error) {
  RequestTrace& t = current_trace();
  static const char* kNames[] = {"finished", "client_gone", "deadline", "error", "error"};
  t.outcome = kNames[static_cast<int>(end)];
  t.prompt_tokens = usage.value("prompt_tokens", int64_t{0});
  t.completion_tokens = usage.value("completion_tokens", int64_t{0});
  t.cached_prompt_tokens = 0;
  if (!error.empty()) t.error = error;
  state.metrics.tokens(t.prompt_tokens, 0, t.completion_tokens);
  if (end == End::kClientGone) state.metrics.client_disconnected();
  if (end == End::kDeadline) state.metrics.deadline_exceeded();
}

std::string end_message(End end, const std::string& error) {
  if (end == End::kDeadline) return "the request ran past the server's per-request deadline and was cancelled";
  if (end == End::kStopping) return "the server is shutting down";
  return error.empty() ? "the engine failed to deliver the output" : error;
}

}  // namespace

void handle_legacy_completion(ServerState& state, const HttpRequest& req, HttpResponse& res) {
  CompletionsRequest cr;
  if (auto e = parse_completions_request(req.body, &cr)) return send_error(res, *e);
  const auto& names = state.config.served_model_names;
  if (std::find(names.begin(), names.end(), cr.model) == names.end())
    return send_error(res, model_not_found(kOpenAI, cr.model));

  // The engine loaded the same files, so this shares its tokenizer instead of parsing again.
  di_tokenizer* tok_raw = nullptr;
  di_error* err = nullptr;
  const std::string& dir = state.config.model_dir;
  const bool have_tokenizer = di_tokenizer_create(dir.data(), dir.size(), &tok_raw, &err) == DI_OK;
  di_error_destroy(err);
  err = nullptr;
  TokenizerPtr tok(tok_raw, di_tokenizer_destroy);
  std::vector<int32_t> ids = cr.prompt_ids;
  std::string echo;
  if (cr.prompt_text) {
    if (!have_tokenizer) return send_error(res, server_error(kOpenAI, 400, "prompt: this model has no tokenizer.json; send token ids"));
    int32_t* out = nullptr;
    size_t count = 0;
    // As vLLM: the tokenizer's own BOS (tokenizer_config.json) and special tokens written in
    // the prompt count, since a raw prompt is the client's own template.
    const di_status st = di_tokenizer_encode(tok.get(), cr.prompt_text->data(), cr.prompt_text->size(),
                                             DI_TOKENIZE_ADD_SPECIAL | DI_TOKENIZE_ADDED_TOKENS, &out, &count, &err);
    if (st != DI_OK) return send_error(res, call_error(take_error(st, err)));
    ids.assign(out, out + count);
    di_free(out);
    if (cr.echo) echo = *cr.prompt_text;
  } else if (cr.echo || cr.logprobs >= 0) {
    if (!have_tokenizer) return send_error(res, server_error(kOpenAI, 400, "echo/logprobs: this model has no tokenizer.json to spell tokens with"));
    if (cr.echo) {
      char* text = nullptr;
      size_t len = 0;
      const di_status st = di_tokenizer_decode(tok.get(), ids.data(), ids.size(), 0, &text, &len, &err);
      if (st != DI_OK) return send_error(res, call_error(take_error(st, err)));
      echo.assign(text, len);
      di_free(text);
    }
  }
  if (ids.empty()) return send_error(res, server_error(kOpenAI, 400, "prompt: it encodes to no tokens"));

  di_options* opts = nullptr;
  di_options_create(&opts, nullptr);
  std::unique_ptr<di_options, void (*)(di_options*)> hold(opts, di_options_destroy);
  const std::string sampling = cr.sampling.dump();
  di_status st = di_options_update_json(opts, sampling.data(), sampling.size(), &err);
  if (st != DI_OK) return send_error(res, call_error(take_error(st, err)));
  di_request* raw = nullptr;
  st = di_submit(state.engine, ids.data(), ids.size(), opts, nullptr, nullptr, &raw, &err);
  if (st != DI_OK) return send_error(res, call_error(take_error(st, err)));
  auto request = std::shared_ptr<di_request>(raw, di_request_destroy);  // destroy cancels
  RequestTrace& trace = current_trace();
  trace.engine_request = di_request_id(raw);
  trace.stream = cr.stream;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(state.config.limits.request_timeout_s));
  auto output = std::make_shared<CompletionsOutput>(cr.model, cr.n, cr.logprobs, tok.get(), std::move(echo));
  auto tokenizer = std::shared_ptr<di_tokenizer>(tok.release(), di_tokenizer_destroy);  // outlives the output

  if (!cr.stream) {
    PeerProbe peer(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
    std::string error;
    const End end = poll_until_done(
        request.get(), deadline, state.stopping, [&](const di_chunk& c) { output->on_chunk(c); return true; },
        [&] { return !peer.client_gone(); }, &error);
    const json body = output->response();
    record(state, end, body["usage"], error);
    if (end == End::kClientGone) return send_error(res, server_error(kOpenAI, 499, "the client closed the connection"));
    if (end == End::kDeadline) return send_error(res, server_error(kOpenAI, 504, end_message(end, error)));
    if (end != End::kFinished) return send_error(res, server_error(kOpenAI, 500, end_message(end, error)));
    return send_json(res, 200, body.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  ServerState* s = &state;
  const bool include_usage = cr.include_usage;
  res.set_chunked_content_provider(
      "text/event-stream",
      [s, request, output, tokenizer, deadline, include_usage, local_addr = req.local_addr,
       local_port = req.local_port, remote_addr = req.remote_addr,
       remote_port = req.remote_port](size_t, DataSink& sink) {
        SseWriter writer([&sink](const char* d, size_t n) { return sink.write(d, n); });
        WriteStallWatch stall(find_connection_socket(local_addr, local_port, remote_addr, remote_port),
                              std::chrono::seconds(s->config.limits.write_timeout_s));
        auto last_write = Clock::now();
        auto send = [&](const json& j) {
          last_write = Clock::now();
          return writer.write_event("", j.dump(-1, ' ', false, json::error_handler_t::replace));
        };
        std::string error;
        const End end = poll_until_done(
            request.get(), deadline, s->stopping,
            [&](const di_chunk& c) {
              const json chunk = output->on_chunk(c);
              return chunk.is_null() || send(chunk);
            },
            [&] {
              // As the chat endpoints: a client that stopped reading is dropped after the write
              // timeout; a quiet engine sends a comment each second, which also finds a client
              // that left.
              if (stall.stalled()) return false;
              if (Clock::now() - last_write < std::chrono::seconds(1)) return true;
              last_write = Clock::now();
              return writer.write_comment("ping");
            },
            &error);
        record(*s, end, output->usage_chunk()["usage"], error);
        if (end == End::kClientGone) return false;
        if (end != End::kFinished) {
          send(server_error(kOpenAI, end == End::kDeadline ? 504 : 500, end_message(end, error)).body());
        } else if (include_usage) {
          send(output->usage_chunk());
        }
        writer.write_event("", "[DONE]");
        sink.done();
        return true;
      },
      [request](bool success) {
        if (!success) di_cancel(request.get(), nullptr);  // the connection broke: free the KV blocks now
      });
}

}  // namespace di::server
