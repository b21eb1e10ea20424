// ModelRunner: turns a scheduled batch into the model's ForwardBatch (each sequence's new tokens
// and its paged cache view) and runs it. In deterministic mode every sequence runs in its own
// forward, so no reduction ever mixes sequences and outputs cannot depend on batch composition.
#pragma once

#include <vector>

#include "base/status.h"
#include "engine/kv/kv_cache_manager.h"
#include "engine/model/model.h"
#include "engine/sched/scheduler.h"

namespace di::engine {

class ModelRunner {
 public:
  ModelRunner(Model* model, KvCacheManager* kv, bool per_sequence)
      : model_(model), kv_(kv), per_sequence_(per_sequence) {}

  // Runs the forward; `logits` gets one vocab-sized row per scheduled sequence, in order. When
  // the model applies token masks itself, the constrained sequences' masks are computed while it
  // runs and `masked[i]` says whether row i already carries its mask (else the sampler applies
  // it); `masked` is all 0 otherwise.
  Status execute(const SchedulerOutput& out, std::vector<float>& logits, std::vector<uint8_t>& masked);
  // Seconds the last execute spent in the model's forward calls (the rest was batch assembly).
  double last_forward_seconds() const { return forward_seconds_; }

 private:
  Model* model_;
  KvCacheManager* kv_;
  bool per_sequence_;
  std::vector<float> scratch_;
  double forward_seconds_ = 0;
};

}  // namespace di::engine
