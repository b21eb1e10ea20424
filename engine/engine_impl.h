// LLMEngine::Impl: the engine's state, shared by engine.cpp (submission and the step thread) and
// engine_output.cpp (the output thread). Private to engine/; each field says which thread owns it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/metrics/metrics.h"
#include "engine/model_runner.h"
#include "engine/output/text_stream.h"
#include "engine/sample/sampler.h"
#include "engine/sched/dp_coordinator.h"
#include "engine/sched/scheduler.h"

namespace di::engine {

using Clock = std::chrono::steady_clock;

struct RequestState {
  uint64_t id = 0;
  std::shared_ptr<RequestStream> stream;
  std::shared_ptr<const SamplingParams> params;
  Clock::time_point submitted;
  int64_t prompt_tokens = 0;
  // Step thread.
  std::vector<std::unique_ptr<Sequence>> seqs;  // n; seqs[1..] fork from seqs[0]'s prompt
  bool forks_pending = false;
  int32_t num_finished = 0;
  // Output thread.
  std::vector<TextStream> text;
  std::vector<bool> out_finished;
  std::vector<int64_t> out_tokens;
  std::vector<Clock::time_point> last_token_at;
  int32_t out_num_finished = 0;
};

// What the step thread tells the output thread about one completion in one step.
struct SeqEvent {
  std::shared_ptr<RequestState> req;
  int32_t index = 0;
  int32_t token = -1;  // -1: no new token
  bool suppress_text = false;  // the token ended the completion as a stop id / EOS
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top_logprobs;
  FinishReason finish = FinishReason::kNone;
  std::string error;
  int64_t cached_prompt_tokens = 0;
};

struct LLMEngine::Impl {
  // Immutable after create.
  EngineInfo info;
  std::unique_ptr<Model> model;
  std::shared_ptr<const TokenText> token_text;
  std::unique_ptr<KvCacheManager> kv;      // step thread
  std::unique_ptr<Scheduler> scheduler;    // step thread
  std::unique_ptr<ModelRunner> runner;     // step thread
  std::unique_ptr<Sampler> sampler;        // step thread
  EngineMetrics metrics;

  // Inbox: any thread -> step thread.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<RequestState>> new_requests;
  std::vector<uint64_t> cancels;
  std::vector<std::pair<uint64_t, int32_t>> stop_finishes;  // (request, index) ended by a stop string
  bool stopping = false;
  KvCacheStats kv_snapshot;  // guarded by mu

  // Step thread.
  std::unordered_map<uint64_t, std::shared_ptr<RequestState>> live;
  std::vector<SampleTask> tasks;                  // this step's draws
  std::vector<Result<SampledToken>> drawn;        // their tokens, in the same order
  StepTiming step_timing;  // the step in flight; run_step fills all but its output phase

  // Output queue: step thread -> output thread.
  std::mutex out_mu;
  std::condition_variable out_cv;
  std::deque<std::vector<SeqEvent>> out_queue;
  uint64_t batches_pushed = 0;
  uint64_t batches_done = 0;
  bool out_stop = false;

  std::atomic<uint64_t> next_id{1};
  std::mutex seed_mu;
  uint64_t seed_state = 0;

  std::thread step_thread;
  std::thread output_thread;

  void step_loop();
  void output_loop();
  // Takes new requests, cancels and stop-string finishes; with `block`, first waits for any.
  // False once the engine is stopping.
  bool drain_inbox(bool block);
  // false: nothing was scheduled. allow_prefill false: a data-parallel vote went to decode.
  bool run_step(bool allow_prefill = true);
  bool last_step_prefilled = false;  // step thread: run_step scheduled a prefill chunk
  void finish_seq(RequestState& req, Sequence& seq, FinishReason reason, std::string error,
                  std::vector<SeqEvent>& events);
  // Appends a drawn token (or fails the completion with the draw's error), then checks the
  // constraint, stop ids and lengths.
  void commit_token(RequestState& req, Sequence& seq, Result<SampledToken>& r, std::vector<SeqEvent>& events);
  bool forks_now(const RequestState& req, const Sequence& seq) const;
  void push_events(std::vector<SeqEvent> events);
  void process_event(SeqEvent& ev);
  void update_snapshot();
};

}  // namespace di::engine
