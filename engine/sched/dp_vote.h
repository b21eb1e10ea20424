// Data-parallel vote: ranks that share collectives must run the same kind of step. Each rank says
// whether it has prefill work (a prompt it could admit, or a prompt half-way through chunked
// prefill); the vote decides whether this step may prefill. ANY: when at least one rank wants to.
// ALL: only when every rank wants to, so prefills line up across ranks — but a rank that keeps
// wanting is deferred at most `max_defer_steps` steps, then the step prefills anyway (no
// starvation). When the vote says no, every rank falls back to a decode-only step; a rank with
// nothing to run joins with an empty (dummy) batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace di::engine {

enum class DpVoteMode { kAll, kAny };

struct DpRankReport {
  bool wants_prefill = false;  // Scheduler::has_prefill_work()
  bool has_work = false;       // Scheduler::has_work()
};

struct DpStepDecision {
  bool allow_prefill = false;  // the same for every rank
  bool idle = false;           // no rank has work: nobody steps
  std::vector<bool> dummy;     // per rank: run an empty batch to keep collectives aligned
};

class DpVoter {
 public:
  explicit DpVoter(DpVoteMode mode, int32_t max_defer_steps = 8)
      : mode_(mode), max_defer_steps_(max_defer_steps) {}
  DpStepDecision vote(std::span<const DpRankReport> ranks);

 private:
  DpVoteMode mode_;
  int32_t max_defer_steps_;
  int32_t deferred_ = 0;  // consecutive steps a wanted prefill was voted down
};

}  // namespace di::engine
