// RequestStream: a mutex-guarded chunk queue with a condition variable for pollers.
#include "engine/output/request_stream.h"

namespace di::engine {

void RequestStream::push(CompletionChunk chunk) {
  const bool final = chunk.is_final;
  if (callback_) {
    callback_(chunk);
    std::lock_guard<std::mutex> lock(mu_);
    if (final) final_pushed_ = true;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(chunk));
    if (final) final_pushed_ = true;
  }
  cv_.notify_all();
}

RequestStream::Poll RequestStream::poll(int64_t timeout_ms, CompletionChunk* out) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] { return !queue_.empty() || final_pushed_; };
  if (timeout_ms < 0) {
    cv_.wait(lock, ready);
  } else if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), ready)) {
    return Poll::kTimeout;
  }
  if (queue_.empty()) return Poll::kEnd;
  *out = std::move(queue_.front());
  queue_.pop_front();
  return Poll::kChunk;
}

bool RequestStream::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return final_pushed_;
}

}  // namespace di::engine
