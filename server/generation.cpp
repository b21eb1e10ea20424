// Generation: the submit → poll → parse loop of one request.
#include "server/generation.h"

namespace di::server {
namespace {

constexpr int32_t kPollMs = 50;

struct EventSink {
  const Generation::EventFn* fn;
  bool client_gone = false;
};

void on_parser_event(void* user_data, const char* event, size_t event_len, const char* data,
                     size_t data_len) {
  auto* sink = static_cast<EventSink*>(user_data);
  if (sink->client_gone || sink->fn == nullptr || !*sink->fn) return;
  if (!(*sink->fn)(std::string_view(event, event_len), std::string_view(data, data_len)))
    sink->client_gone = true;
}

}  // namespace

CallError take_error(di_status status, di_error* err) {
  CallError e;
  e.status = status;
  e.message = err ? di_error_message(err) : di_status_name(status);
  if (err) e.detail = di_error_detail(err);
  di_error_destroy(err);
  return e;
}

std::unique_ptr<Generation> Generation::start(di_engine* engine, const di_prepared* prepared,
                                              CallError* error) {
  std::unique_ptr<Generation> g(new Generation());
  di_error* err = nullptr;
  size_t len = 0;
  const char* options = di_prepared_parser_options_json(prepared, &len);
  di_status st = di_parser_create_from_json(options, len, &g->parser_, &err);
  if (st != DI_OK) {
    *error = take_error(st, err);
    return nullptr;
  }
  st = di_submit_prepared(engine, prepared, nullptr, nullptr, &g->request_, &err);
  if (st != DI_OK) {
    *error = take_error(st, err);
    return nullptr;
  }
  return g;
}

Generation::~Generation() {
  di_request_destroy(request_);  // cancels an unfinished request: its KV blocks go back
  di_parser_destroy(parser_);
}

void Generation::cancel() { di_cancel(request_, nullptr); }

void Generation::fail_output(const std::string& message, const EventFn& on_event) {
  di_parse_chunk c{};
  c.struct_size = sizeof(c);
  c.finish_reason = DI_PARSE_FINISH_ERROR;
  c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;  // keep the last known
  c.error_message = message.c_str();
  c.error_message_len = message.size();
  EventSink sink{&on_event};
  di_parse_push(parser_, &c, on_parser_event, &sink, nullptr);
}

Generation::Outcome Generation::run(const EventFn& on_event,
                                    std::chrono::steady_clock::time_point deadline,
                                    const IdleFn& on_idle, const std::atomic<bool>* stop) {
  Outcome out;
  EventSink sink{&on_event};
  auto idle_since = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      cancel();
      out.end = End::kDeadline;
      out.error = "the request ran past the server's per-request deadline and was cancelled";
      fail_output(out.error, on_event);
      return out;
    }
    if (stop != nullptr && stop->load()) {
      cancel();
      out.end = End::kError;
      out.error = "the server is shutting down";
      fail_output(out.error, on_event);
      return out;
    }
    di_chunk c{};
    c.struct_size = sizeof(c);
    di_error* err = nullptr;
    const di_status st = di_poll_chunk(request_, kPollMs, &c, &err);
    if (st == DI_TIMEOUT) {
      const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(now - idle_since);
      if (on_idle && !on_idle(idle)) {
        cancel();
        out.end = End::kClientGone;
        return out;
      }
      continue;
    }
    if (st == DI_END_OF_STREAM) {
      di_parse_finish(parser_, on_parser_event, &sink, nullptr);  // no-op once it ended
      break;
    }
    if (st != DI_OK) {
      CallError e = take_error(st, err);
      cancel();
      out.end = End::kError;
      out.error = e.message;
      fail_output("the engine failed to deliver the output", on_event);
      return out;
    }
    idle_since = std::chrono::steady_clock::now();
    out.prompt_tokens = c.prompt_tokens;
    out.cached_prompt_tokens = c.cached_prompt_tokens;
    out.completion_tokens = c.completion_tokens;
    if (c.finish_reason != DI_FINISH_NONE) out.finish_reason = c.finish_reason;
    const di_status ps = di_parse_push_chunk(parser_, &c, on_parser_event, &sink, nullptr);
    if (sink.client_gone) {
      cancel();
      out.end = End::kClientGone;
      return out;
    }
    if (c.finish_reason == DI_FINISH_ERROR) {
      out.end = End::kError;
      out.error = std::string(c.error_message, c.error_message_len);
    }
    // The parser ended before the engine did: it matched a stop sequence. The engine would go on
    // generating what nobody reads, so stop it now.
    if (ps == DI_END_OF_STREAM) {
      if (!c.is_final) cancel();
      break;
    }
    if (c.is_final) {
      di_parse_finish(parser_, on_parser_event, &sink, nullptr);
      break;
    }
  }
  if (sink.client_gone) out.end = End::kClientGone;
  return out;
}

std::string Generation::response_json() const {
  char* json = nullptr;
  size_t len = 0;
  if (di_parse_response(parser_, &json, &len, nullptr) != DI_OK) return "{}";
  std::string out(json, len);
  di_free(json);
  return out;
}

}  // namespace di::server
