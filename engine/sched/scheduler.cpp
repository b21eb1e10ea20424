// Scheduler: one step's batch, following vLLM v1's single token budget (no prefill/decode phase
// split): running sequences first in admission order, then waiting ones while budget and places
// last. A running sequence that cannot get blocks preempts the newest running one (recompute).
#include "engine/sched/scheduler.h"

#include <algorithm>

namespace di::engine {

void Scheduler::add(Sequence* seq, int32_t reserve) {
  seq->status = SequenceStatus::kWaiting;
  waiting_.push_back(seq);
  if (reserve > 0) reserves_.emplace_back(seq, reserve);
}

void Scheduler::add_running(Sequence* seq) {
  seq->status = SequenceStatus::kRunning;
  seq->arrival = next_arrival_++;
  running_.push_back(seq);
}

int32_t Scheduler::reserved_for(const Sequence* seq) const {
  for (const auto& [s, r] : reserves_)
    if (s == seq) return r;
  return 0;
}

bool Scheduler::can_admit() const {
  if (waiting_.empty()) return false;
  int32_t reserved = 0;
  for (const auto& [s, r] : reserves_)
    if (s->status == SequenceStatus::kRunning) reserved += r;
  return static_cast<int64_t>(running_.size()) + reserved + 1 + reserved_for(waiting_.front()) <=
         config_.max_num_seqs;
}

bool Scheduler::has_prefill_work() const {
  if (can_admit()) return true;
  return std::any_of(running_.begin(), running_.end(), [](const Sequence* s) { return s->is_prefill(); });
}

int64_t Scheduler::chunk_for(Sequence& seq, int64_t budget) {
  const int64_t start = seq.num_computed_tokens;
  const int64_t remaining = seq.num_tokens() - start;
  if (remaining <= 0 || budget <= 0) return 0;
  int64_t n = std::min(remaining, budget);
  if (config_.deterministic && remaining > 1) {
    // Fixed grid: the chunk ends where it would end alone, or the sequence waits a step.
    const int64_t grid = config_.max_num_batched_tokens;
    n = std::min(remaining, (start / grid + 1) * grid - start);
    if (n > budget) return 0;
  }
  const int64_t boundary = kv_->checkpoint_boundary(seq);
  if (boundary > start && boundary < start + n) n = boundary - start;
  return n;
}

void Scheduler::preempt(Sequence* seq, SchedulerOutput& out) {
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  kv_->free(*seq);
  seq->status = SequenceStatus::kWaiting;
  ++seq->num_preemptions;
  ++num_preemptions_;
  waiting_.push_front(seq);
  out.preempted.push_back(seq);
  // A preempted sequence may already be in this step's batch; drop it from there.
  std::erase_if(out.scheduled, [&](const ScheduledSequence& s) { return s.seq == seq; });
}

SchedulerOutput Scheduler::schedule(bool allow_prefill) {
  SchedulerOutput out;
  int64_t budget = config_.max_num_batched_tokens;

  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence* seq = running_[i];
    if (!allow_prefill && seq->is_prefill()) {
      ++i;
      continue;
    }
    const int64_t n = chunk_for(*seq, budget);
    if (n == 0) {
      ++i;
      continue;
    }
    bool self_preempted = false;
    while (!kv_->allocate(*seq, seq->num_computed_tokens + n)) {
      Sequence* victim = running_.back();
      preempt(victim, out);
      if (victim == seq) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    // A decode step also verifies the sequence's draft when budget and free blocks allow (a draft
    // never preempts anyone).
    int32_t draft = 0;
    if (n == 1 && !seq->is_prefill() && config_.max_draft_tokens > 0) {
      // Deterministic mode: the draft's length must not depend on what else runs this step.
      const int64_t room = config_.deterministic ? config_.max_draft_tokens : budget - 1;
      draft = static_cast<int32_t>(std::min<int64_t>(
          {static_cast<int64_t>(seq->draft_tokens.size()), config_.max_draft_tokens, room}));
      while (draft > 0 && !kv_->allocate(*seq, seq->num_computed_tokens + 1 + draft)) --draft;
    }
    out.scheduled.push_back({seq, seq->num_computed_tokens, n, draft});
    budget -= n + draft;
    ++i;
  }

  if (allow_prefill && out.preempted.empty()) {
    while (budget > 0 && can_admit()) {
      Sequence* seq = waiting_.front();
      if (!kv_->admit(*seq)) break;
      const int64_t n = chunk_for(*seq, budget);
      if (n == 0 || !kv_->allocate(*seq, seq->num_computed_tokens + n)) {
        kv_->free(*seq);
        break;
      }
      kv_->note_admitted(*seq);
      waiting_.pop_front();
      seq->status = SequenceStatus::kRunning;
      seq->arrival = next_arrival_++;
      running_.push_back(seq);
      out.scheduled.push_back({seq, seq->num_computed_tokens, n, 0});
      budget -= n;
    }
  }
  for (const ScheduledSequence& s : out.scheduled) out.num_batched_tokens += s.num_tokens + s.num_draft;
  return out;
}

void Scheduler::clear_reserve(const Sequence* seq) {
  std::erase_if(reserves_, [&](const auto& r) { return r.first == seq; });
}

void Scheduler::advance(const ScheduledSequence& s) {
  s.seq->num_computed_tokens = s.start + s.num_tokens;
  kv_->commit(*s.seq);
}

void Scheduler::finish(Sequence* seq, FinishReason reason) {
  if (seq->status == SequenceStatus::kFinished) return;
  if (auto it = std::find(running_.begin(), running_.end(), seq); it != running_.end()) running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), seq); it != waiting_.end()) waiting_.erase(it);
  std::erase_if(reserves_, [&](const auto& r) { return r.first == seq; });
  kv_->free(*seq);
  seq->status = SequenceStatus::kFinished;
  seq->finish_reason = reason;
}

}  // namespace di::engine
