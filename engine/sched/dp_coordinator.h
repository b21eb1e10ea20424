// DpCoordinator: the seam through which a data-parallel rank's engine joins each step's vote.
// The step thread reports whether it has prefill work and any work, and gets back the decision
// every rank shares: run a prefill-allowed step, a decode-only step, an empty (dummy) step, or —
// when no rank has work — nothing until new work arrives somewhere. InProcessDpCoordinator runs
// the ranks as engines of one process (tests, simulated ranks); across processes the same
// interface sits over an all-gather of the reports (the NCCL path, not built yet).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/sched/dp_vote.h"

namespace di::engine {

struct DpRound {
  int64_t index = 0;  // counts the decided rounds, from 0; the same on every rank
  DpStepDecision decision;
  // An idle round during which work arrived that some rank had not yet looked for (its epoch
  // was older): every rank goes round again at once instead of waiting.
  bool rerun = false;
};

// What one rank's step ran under a round's decision (for alignment checks and metrics).
struct DpStepRecord {
  int64_t round = 0;
  bool allow_prefill = false;
  bool prefilled = false;  // some prompt positions (or recomputed positions) ran this step
  bool dummy = false;      // the rank scheduled nothing and joined with an empty batch
};

class DpCoordinator {
 public:
  virtual ~DpCoordinator() = default;
  virtual int32_t num_ranks() const = 0;
  // Blocks until every rank still in the group has reported for this round; returns the shared
  // decision. Called once per step-loop iteration by each rank's step thread, with the epoch()
  // it read before draining its inbox.
  virtual DpRound step(int32_t rank, DpRankReport report, uint64_t seen_epoch) = 0;
  // A counter that changes whenever work arrives at any rank (or a rank stops); read it before
  // draining the inbox, and after an idle round wait_for_work(that value).
  virtual uint64_t epoch() const = 0;
  virtual void wake() = 0;
  // After an idle round that is not a rerun: returns once epoch() differs from `seen`.
  virtual void wait_for_work(uint64_t seen) = 0;
  virtual void record(int32_t rank, const DpStepRecord& step) = 0;
  // The rank's engine is shutting down: later rounds no longer wait for it.
  virtual void leave(int32_t rank) = 0;
};

// Every rank in this process: a barrier per round, the DpVoter, and each rank's step records.
class InProcessDpCoordinator : public DpCoordinator {
 public:
  InProcessDpCoordinator(int32_t num_ranks, DpVoteMode mode, int32_t max_defer_steps = 8);

  int32_t num_ranks() const override { return static_cast<int32_t>(reports_.size()); }
  DpRound step(int32_t rank, DpRankReport report, uint64_t seen_epoch) override;
  uint64_t epoch() const override;
  void wake() override;
  void wait_for_work(uint64_t seen) override;
  void record(int32_t rank, const DpStepRecord& step) override;
  void leave(int32_t rank) override;

  // Snapshots for tests: each rank's steps, and every decided round's decision.
  std::vector<std::vector<DpStepRecord>> records() const;
  std::vector<DpStepDecision> decisions() const;

 private:
  void decide_locked();

  mutable std::mutex mu_;
  std::condition_variable round_cv_;  // a round was decided
  std::condition_variable work_cv_;   // epoch_ changed
  DpVoter voter_;
  std::vector<DpRankReport> reports_;  // this round's, per rank ({false, false} once left)
  std::vector<uint64_t> seen_;         // this round's, per rank
  std::vector<bool> arrived_;
  std::vector<bool> active_;
  int32_t num_arrived_ = 0;
  int32_t num_active_ = 0;
  int64_t round_ = 0;
  DpRound last_;
  uint64_t epoch_ = 0;
  std::vector<std::vector<DpStepRecord>> records_;
  std::vector<DpStepDecision> decisions_;
};

}  // namespace di::engine
