// InProcessDpCoordinator: the per-round barrier over the ranks' reports, the idle wait and the
// records of what each rank ran.
#include "engine/sched/dp_coordinator.h"

namespace di::engine {

InProcessDpCoordinator::InProcessDpCoordinator(int32_t num_ranks, DpVoteMode mode, int32_t max_defer_steps)
    : voter_(mode, max_defer_steps),
      reports_(num_ranks),
      seen_(num_ranks, 0),
      arrived_(num_ranks, false),
      active_(num_ranks, true),
      num_active_(num_ranks),
      records_(num_ranks) {}

DpRound InProcessDpCoordinator::step(int32_t rank, DpRankReport report, uint64_t seen_epoch) {
  std::unique_lock<std::mutex> l(mu_);
  reports_[rank] = report;
  seen_[rank] = seen_epoch;
  arrived_[rank] = true;
  ++num_arrived_;
  const int64_t round = round_;
  if (num_arrived_ == num_active_) {
    decide_locked();
  } else {
    round_cv_.wait(l, [&] { return round_ != round; });
  }
  // The next round cannot be decided before this rank reports again: last_ is this round's.
  return last_;
}

void InProcessDpCoordinator::decide_locked() {
  last_.index = round_;
  last_.decision = voter_.vote(reports_);
  decisions_.push_back(last_.decision);
  last_.rerun = false;
  for (size_t r = 0; r < reports_.size(); ++r) last_.rerun = last_.rerun || (active_[r] && seen_[r] != epoch_);
  for (size_t r = 0; r < reports_.size(); ++r) {
    arrived_[r] = false;
    if (!active_[r]) reports_[r] = {};
  }
  num_arrived_ = 0;
  ++round_;
  round_cv_.notify_all();
}

uint64_t InProcessDpCoordinator::epoch() const {
  std::lock_guard<std::mutex> l(mu_);
  return epoch_;
}

void InProcessDpCoordinator::wake() {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++epoch_;
  }
  work_cv_.notify_all();
}

void InProcessDpCoordinator::wait_for_work(uint64_t seen) {
  std::unique_lock<std::mutex> l(mu_);
  work_cv_.wait(l, [&] { return epoch_ != seen; });
}

void InProcessDpCoordinator::record(int32_t rank, const DpStepRecord& step) {
  std::lock_guard<std::mutex> l(mu_);
  records_[rank].push_back(step);
}

void InProcessDpCoordinator::leave(int32_t rank) {
  std::lock_guard<std::mutex> l(mu_);
  if (!active_[rank]) return;
  active_[rank] = false;
  reports_[rank] = {};
  --num_active_;
  // The others may be waiting for this rank's report only.
  if (num_active_ > 0 && num_arrived_ == num_active_) decide_locked();
  ++epoch_;
  work_cv_.notify_all();
}

std::vector<std::vector<DpStepRecord>> InProcessDpCoordinator::records() const {
  std::lock_guard<std::mutex> l(mu_);
  return records_;
}

std::vector<DpStepDecision> InProcessDpCoordinator::decisions() const {
  std::lock_guard<std::mutex> l(mu_);
  return decisions_;
}

}  // namespace di::engine
