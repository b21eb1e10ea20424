// RequestStream: where one request's chunks go — a callback, or a queue a caller polls. Shared by
// the engine (producer, on its output thread) and the caller (consumer); outlives either.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "engine/output/completion_chunk.h"

namespace di::engine {

class RequestStream {
 public:
  using Callback = std::function<void(const CompletionChunk&)>;
  enum class Poll { kChunk, kTimeout, kEnd };

  RequestStream(uint64_t id, Callback callback) : id_(id), callback_(std::move(callback)) {}

  uint64_t id() const { return id_; }
  bool has_callback() const { return static_cast<bool>(callback_); }

  // Delivers a chunk: to the callback (on the calling thread), else to the queue.
  void push(CompletionChunk chunk);
  // Takes the next queued chunk, waiting up to timeout_ms (< 0: forever). kEnd once the final
  // chunk has been taken.
  Poll poll(int64_t timeout_ms, CompletionChunk* out);
  bool finished() const;

 private:
  const uint64_t id_;
  const Callback callback_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CompletionChunk> queue_;
  bool final_pushed_ = false;
};

}  // namespace di::engine
