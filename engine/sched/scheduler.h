// Scheduler: the waiting and running queues and the choice of each step's batch — decode tokens
// of running sequences first, then prefill chunks, under max_num_batched_tokens and
// max_num_seqs; preemption by recompute when blocks run out. Owns no sequence (the engine does)
// and never runs the model or samples.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/kv/kv_cache_manager.h"
#include "engine/sequence.h"

namespace di::engine {

struct SchedulerConfig {
  int32_t max_num_seqs = 64;
  int64_t max_num_batched_tokens = 2048;
  // Deterministic mode: prefill chunks end on a fixed grid of this many tokens (and at the
  // prefix-cache checkpoint), so how a prompt is split never depends on the other requests.
  bool deterministic = false;
  // Speculative decoding: a decoding sequence also feeds up to this many of its draft tokens
  // (0: off).
  int32_t max_draft_tokens = 0;
};

struct ScheduledSequence {
  Sequence* seq = nullptr;
  int64_t start = 0;       // first position fed (num_computed_tokens before the step)
  int64_t num_tokens = 0;  // tokens fed this step
  int32_t num_draft = 0;   // draft tokens fed after them (seq->draft_tokens' first), to verify
  // True when the chunk reaches the last known token: its logits give the next token.
  bool samples() const { return start + num_tokens == seq->num_tokens(); }
};

struct SchedulerOutput {
  std::vector<ScheduledSequence> scheduled;
  std::vector<Sequence*> preempted;  // moved back to waiting this step
  int64_t num_batched_tokens = 0;
  bool empty() const { return scheduled.empty(); }
};

class Scheduler {
 public:
  Scheduler(SchedulerConfig config, KvCacheManager* kv) : config_(config), kv_(kv) {}

  // Queues a new sequence at the back of waiting. `reserve` extra running places are held for
  // it at admission (the n - 1 completions that will fork from it).
  void add(Sequence* seq, int32_t reserve = 0);
  // Picks this step's batch. With allow_prefill false (a data-parallel vote went to decode) no
  // prompt is admitted and no prefill chunk runs.
  SchedulerOutput schedule(bool allow_prefill = true);
  // After the forward: the scheduled tokens are now in the cache.
  void advance(const ScheduledSequence& s);
  // Releases the running places held for `seq`'s forks (they are running now, or cancelled).
  void clear_reserve(const Sequence* seq);
  // Adds an already-running sequence (a forked completion) to the running queue.
  void add_running(Sequence* seq);
  // Removes `seq` from whichever queue holds it and returns its cache. Idempotent.
  void finish(Sequence* seq, FinishReason reason);

  // True when a prompt could be admitted this step (waiting non-empty and a running place free).
  bool can_admit() const;
  // True when a prefill could run: a prompt to admit, or a running prompt still in prefill.
  bool has_prefill_work() const;
  bool has_work() const { return !waiting_.empty() || !running_.empty(); }
  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  int64_t chunk_for(Sequence& seq, int64_t budget);
  void preempt(Sequence* seq, SchedulerOutput& out);
  int32_t reserved_for(const Sequence* seq) const;

  SchedulerConfig config_;
  KvCacheManager* kv_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // admission order; the back is the newest
  std::vector<std::pair<const Sequence*, int32_t>> reserves_;
  int64_t next_arrival_ = 0;
  int64_t num_preemptions_ = 0;
};

}  // namespace di::engine
