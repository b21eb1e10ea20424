// LLMEngine's output thread: per completion, token ids -> text (UTF-8 safe, stop strings held
// back), logprobs, finish reasons, latency metrics, and delivery to the request's stream.
#include <chrono>

#include "engine/engine_impl.h"

namespace di::engine {

void LLMEngine::Impl::process_event(SeqEvent& ev) {
  RequestState& req = *ev.req;
  const size_t i = static_cast<size_t>(ev.index);
  if (req.out_finished[i]) return;  // e.g. tokens drawn after a stop string already ended it
  CompletionChunk chunk;
  chunk.request_id = req.id;
  chunk.index = ev.index;
  chunk.prompt_tokens = req.prompt_tokens;
  chunk.cached_prompt_tokens = ev.cached_prompt_tokens;
  FinishReason finish = ev.finish;
  if (ev.token >= 0) {
    const Clock::time_point now = Clock::now();
    const double gap = std::chrono::duration<double>(now - req.last_token_at[i]).count();
    if (req.out_tokens[i] == 0) metrics.on_first_token(gap);
    else metrics.on_inter_token(gap);
    req.last_token_at[i] = now;
    ++req.out_tokens[i];
    chunk.token_ids.push_back(ev.token);
    const SamplingParams& p = *req.params;
    if (p.logprobs || p.top_logprobs > 0) {
      chunk.logprobs.push_back(ev.logprob);
      chunk.top_logprobs.push_back(std::move(ev.top_logprobs));
    }
    if (req.text[i].push(ev.token, ev.suppress_text, &chunk.text)) {
      finish = FinishReason::kStopSequence;
      {
        std::lock_guard<std::mutex> l(mu);
        stop_finishes.emplace_back(req.id, ev.index);
      }
      cv.notify_all();
    }
  }
  if (finish != FinishReason::kNone && finish != FinishReason::kStopSequence) req.text[i].flush(&chunk.text);
  chunk.completion_tokens = req.out_tokens[i];
  if (finish != FinishReason::kNone) {
    chunk.finish_reason = finish;
    chunk.error = std::move(ev.error);
    req.out_finished[i] = true;
    if (++req.out_num_finished == static_cast<int32_t>(req.out_finished.size())) {
      chunk.is_final = true;
      metrics.on_request_finished();
    }
  }
  if (chunk.token_ids.empty() && chunk.text.empty() && finish == FinishReason::kNone) return;
  req.stream->push(std::move(chunk));
}

void LLMEngine::Impl::output_loop() {
  for (;;) {
    std::vector<SeqEvent> batch;
    {
      std::unique_lock<std::mutex> l(out_mu);
      out_cv.wait(l, [&] { return out_stop || !out_queue.empty(); });
      if (out_queue.empty()) return;  // out_stop and nothing left
      batch = std::move(out_queue.front());
      out_queue.pop_front();
    }
    const Clock::time_point began = Clock::now();
    for (SeqEvent& ev : batch) process_event(ev);
    metrics.on_output_batch(std::chrono::duration<double>(Clock::now() - began).count());
    {
      std::lock_guard<std::mutex> l(out_mu);
      ++batches_done;
    }
    out_cv.notify_all();
  }
}

}  // namespace di::engine
