// Generation: one API request's life on the engine — submit the recipe-prepared request
// (di_submit_prepared), pull its chunks (di_poll_chunk), feed each of its n completions to its own
// output parser and hand their events on; cancel on a stop sequence, a vanished client or the
// deadline. Knows nothing of HTTP; the handlers decide what events become on the wire.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "deepinfer.h"

namespace di::server {

// A failed C ABI call: its di_status and message.
struct CallError {
  di_status status = DI_OK;
  std::string message;
  std::string detail;  // di_error_detail (the recipe's {"status", "body"}), may be empty
};

class Generation {
 public:
  enum class End { kFinished, kClientGone, kDeadline, kError };
  struct Outcome {
    End end = End::kFinished;
    int32_t finish_reason = DI_FINISH_NONE;  // the engine's (first completion's), when it finished
    int64_t prompt_tokens = 0;
    int64_t cached_prompt_tokens = 0;
    int64_t completion_tokens = 0;  // summed over the n completions
    std::string error;  // kError / kDeadline: what happened
  };
  // Gets each event of completion `index` (0-based, < n): `event` may be empty (Chat
  // Completions). Returns false when the client is gone; the generation then cancels.
  using EventFn = std::function<bool(uint32_t index, std::string_view event, std::string_view data)>;
  // Called about once per poll interval while the request runs, whether chunks arrive or not,
  // with how long no chunk has come; returns false to cancel because the client is gone (a
  // streaming handler writes a keep-alive comment there, a non-streaming one probes the socket).
  using TickFn = std::function<bool(std::chrono::milliseconds idle)>;

  // Makes one parser per completion (di_parser_create from the prepared request) and submits
  // the request. With n > 1 the parsers share one response id and creation time, so that every
  // choice belongs to the same completion object. `prepared` is only read during the call.
  static std::unique_ptr<Generation> start(di_engine* engine, const di_prepared* prepared,
                                           uint32_t n, CallError* error);
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Runs to the end of the output, the deadline, the client's leaving or `*stop` (server
  // shutdown; may be NULL). `on_event` may be empty (non-streaming: only the final response).
  Outcome run(const EventFn& on_event, std::chrono::steady_clock::time_point deadline,
              const TickFn& on_tick = {}, const std::atomic<bool>* stop = nullptr);

  uint32_t num_completions() const { return static_cast<uint32_t>(parsers_.size()); }
  // Completion `index`'s non-streaming response body (or the API's error body when the output
  // failed).
  std::string response_json(uint32_t index = 0) const;
  // Cancels the engine request (idempotent; safe from another thread).
  void cancel();
  uint64_t request_id() const { return di_request_id(request_); }

 private:
  Generation() = default;
  // Ends every unfinished completion's output with an error (deadline, engine failure) so the
  // client gets the API's error event / body.
  void fail_output(const std::string& message, const EventFn& on_event);

  std::vector<di_parser*> parsers_;
  std::vector<bool> ended_;  // the parser delivered its terminal event
  di_request* request_ = nullptr;
};

// Turns a di_error into a CallError and releases it.
CallError take_error(di_status status, di_error* err);

}  // namespace di::server
