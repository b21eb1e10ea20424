// DpVoter: the ALL / ANY rule, the decode fallback and ALL's bounded deferral.
#include "engine/sched/dp_vote.h"

namespace di::engine {

DpStepDecision DpVoter::vote(std::span<const DpRankReport> ranks) {
  DpStepDecision d;
  bool all = !ranks.empty(), any = false, work = false;
  for (const DpRankReport& r : ranks) {
    all = all && r.wants_prefill;
    any = any || r.wants_prefill;
    work = work || r.has_work;
  }
  d.idle = !work;
  if (!d.idle) {
    if (mode_ == DpVoteMode::kAny) {
      d.allow_prefill = any;
    } else {
      d.allow_prefill = all || (any && deferred_ >= max_defer_steps_);
      deferred_ = any && !d.allow_prefill ? deferred_ + 1 : 0;
    }
  }
  d.dummy.resize(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) d.dummy[i] = !d.idle && !ranks[i].has_work;
  return d;
}

}  // namespace di::engine
