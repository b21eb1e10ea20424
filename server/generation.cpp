// Generation: the submit → poll → parse loop of one request.
#include "server/generation.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>

namespace di::server {
namespace {

constexpr int32_t kPollMs = 50;

struct EventSink {
  const Generation::EventFn* fn;
  uint32_t index = 0;
  bool client_gone = false;
};

void on_parser_event(void* user_data, const char* event, size_t event_len, const char* data,
                     size_t data_len) {
  auto* sink = static_cast<EventSink*>(user_data);
  if (sink->client_gone || sink->fn == nullptr || !*sink->fn) return;
  if (!(*sink->fn)(sink->index, std::string_view(event, event_len), std::string_view(data, data_len)))
    sink->client_gone = true;
}

// The overrides that make n parsers write one response: a shared random id and creation time.
std::string shared_identity_json() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[96];
  std::snprintf(buf, sizeof buf, R"({"request_id":"%016llx%08llx","created":%lld})",
                static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng() & 0xffffffffull),
                static_cast<long long>(std::time(nullptr)));
  return buf;
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
                                              uint32_t n, CallError* error) {
  std::unique_ptr<Generation> g(new Generation());
  di_error* err = nullptr;
  const std::string overrides = n > 1 ? shared_identity_json() : std::string();
  for (uint32_t i = 0; i < std::max<uint32_t>(n, 1); ++i) {
    di_parser* parser = nullptr;
    const di_status st = di_parser_create(prepared, overrides.empty() ? nullptr : overrides.data(),
                                          overrides.size(), &parser, &err);
    if (st != DI_OK) {
      *error = take_error(st, err);
      return nullptr;
    }
    g->parsers_.push_back(parser);
    g->ended_.push_back(false);
  }
  const di_status st = di_submit_prepared(engine, prepared, nullptr, nullptr, &g->request_, &err);
  if (st != DI_OK) {
    *error = take_error(st, err);
    return nullptr;
  }
  return g;
}

Generation::~Generation() {
  di_request_destroy(request_);  // cancels an unfinished request: its KV blocks go back
  for (di_parser* p : parsers_) di_parser_destroy(p);
}

void Generation::cancel() { di_cancel(request_, nullptr); }

void Generation::fail_output(const std::string& message, const EventFn& on_event) {
  di_parse_chunk c{};
  c.struct_size = sizeof(c);
  c.finish_reason = DI_PARSE_FINISH_ERROR;
  c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;  // keep the last known
  c.error_message = message.c_str();
  c.error_message_len = message.size();
  for (uint32_t i = 0; i < parsers_.size(); ++i) {
    if (ended_[i]) continue;
    EventSink sink{&on_event, i};
    di_parse_push(parsers_[i], &c, on_parser_event, &sink, nullptr);
    ended_[i] = true;
  }
}

Generation::Outcome Generation::run(const EventFn& on_event,
                                    std::chrono::steady_clock::time_point deadline,
                                    const TickFn& on_tick, const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  Outcome out;
  EventSink sink{&on_event};
  std::vector<int64_t> completion_tokens(parsers_.size(), 0);
  bool have_finish = false;
  auto idle_since = Clock::now();
  auto last_tick = idle_since;
  // Every way out reports the completions' token counts, a cancelled request's too.
  auto done = [&]() -> Outcome {
    out.completion_tokens = 0;
    for (int64_t t : completion_tokens) out.completion_tokens += t;
    if (sink.client_gone) out.end = End::kClientGone;
    return out;
  };
  auto finish_all = [&] {
    for (uint32_t i = 0; i < parsers_.size(); ++i) {
      sink.index = i;
      di_parse_finish(parsers_[i], on_parser_event, &sink, nullptr);  // no-op once it ended
      ended_[i] = true;
    }
  };
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) {
      cancel();
      out.end = End::kDeadline;
      out.error = "the request ran past the server's per-request deadline and was cancelled";
      fail_output(out.error, on_event);
      return done();
    }
    if (stop != nullptr && stop->load()) {
      cancel();
      out.end = End::kError;
      out.error = "the server is shutting down";
      fail_output(out.error, on_event);
      return done();
    }
    // Ticks also run while chunks flow: a busy engine must not hide a client that left.
    if (on_tick && now - last_tick >= std::chrono::milliseconds(kPollMs)) {
      last_tick = now;
      if (!on_tick(std::chrono::duration_cast<std::chrono::milliseconds>(now - idle_since))) {
        cancel();
        out.end = End::kClientGone;
        return done();
      }
    }
    di_chunk c{};
    c.struct_size = sizeof(c);
    di_error* err = nullptr;
    const di_status st = di_poll_chunk(request_, kPollMs, &c, &err);
    if (st == DI_TIMEOUT) continue;
    if (st == DI_END_OF_STREAM) {
      finish_all();
      break;
    }
    if (st != DI_OK || c.index >= parsers_.size()) {
      CallError e;
      if (st != DI_OK) e = take_error(st, err);
      else e.message = "chunk index " + std::to_string(c.index) + " past the request's completions";
      cancel();
      out.end = End::kError;
      out.error = e.message;
      fail_output("the engine failed to deliver the output", on_event);
      return done();
    }
    idle_since = Clock::now();
    out.prompt_tokens = c.prompt_tokens;
    out.cached_prompt_tokens = c.cached_prompt_tokens;
    completion_tokens[c.index] = c.completion_tokens;
    if (c.finish_reason != DI_FINISH_NONE && (!have_finish || c.index == 0)) {
      out.finish_reason = c.finish_reason;
      have_finish = true;
    }
    sink.index = c.index;
    const di_status ps = di_parse_push_chunk(parsers_[c.index], &c, on_parser_event, &sink, nullptr);
    if (sink.client_gone) {
      cancel();
      out.end = End::kClientGone;
      break;
    }
    if (c.finish_reason == DI_FINISH_ERROR) {
      out.end = End::kError;
      out.error = std::string(c.error_message, c.error_message_len);
    }
    if (c.is_final) {
      finish_all();
      break;
    }
    if (ps == DI_END_OF_STREAM) ended_[c.index] = true;
    // Every parser ended before the engine did: they matched stop sequences. The engine would
    // go on generating what nobody reads, so stop it now. (One completion cannot be cancelled
    // alone: with n > 1 the others keep running and the ended one's chunks are dropped.)
    bool all_ended = true;
    for (bool e : ended_) all_ended = all_ended && e;
    if (all_ended) {
      cancel();
      break;
    }
  }
  return done();
}

std::string Generation::response_json(uint32_t index) const {
  char* json = nullptr;
  size_t len = 0;
  if (index >= parsers_.size() || di_parse_response(parsers_[index], &json, &len, nullptr) != DI_OK) return "{}";
  std::string out(json, len);
  di_free(json);
  return out;
}

}  // namespace di::server
