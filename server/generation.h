// Generation: one API request's life on the engine — submit the recipe-prepared request
// (di_submit_prepared), pull its chunks (di_poll_chunk), feed them to the request's output
// parser and hand its events on; cancel on a stop sequence, a vanished client or the deadline.
// Knows nothing of HTTP; the handlers decide what events become on the wire.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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
    int32_t finish_reason = DI_FINISH_NONE;  // the engine's, when it finished
    int64_t prompt_tokens = 0;
    int64_t cached_prompt_tokens = 0;
    int64_t completion_tokens = 0;
    std::string error;  // kError / kDeadline: what happened
  };
  // Gets each event: `event` may be empty (Chat Completions). Returns false when the client is
  // gone; the generation then cancels its request.
  using EventFn = std::function<bool(std::string_view event, std::string_view data)>;
  // Called while no chunk arrives (about every poll interval); returns false to cancel (a
  // streaming handler writes a keep-alive comment there, which fails once the client is gone).
  using IdleFn = std::function<bool(std::chrono::milliseconds idle)>;

  // Makes the parser from the prepared request's parser options and submits it. The prepared
  // request is only read during the call.
  static std::unique_ptr<Generation> start(di_engine* engine, const di_prepared* prepared,
                                           CallError* error);
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Runs to the end of the output, the deadline, the client's leaving or `*stop` (server
  // shutdown; may be NULL). `on_event` may be empty (non-streaming: only the final response).
  Outcome run(const EventFn& on_event, std::chrono::steady_clock::time_point deadline,
              const IdleFn& on_idle = {}, const std::atomic<bool>* stop = nullptr);

  // The non-streaming response body (or the API's error body when the output failed).
  std::string response_json() const;
  // Cancels the engine request (idempotent; safe from another thread).
  void cancel();
  uint64_t request_id() const { return di_request_id(request_); }

 private:
  Generation() = default;
  // Ends the parser's output with an error (deadline, engine failure) so the client gets the
  // API's error event / body.
  void fail_output(const std::string& message, const EventFn& on_event);

  di_parser* parser_ = nullptr;
  di_request* request_ = nullptr;
};

// Turns a di_error into a CallError and releases it.
CallError take_error(di_status status, di_error* err);

}  // namespace di::server
