// ModelRunner: turns a scheduled batch into the model's ForwardBatch (each sequence's new tokens
// and its paged cache view), runs it and draws the step's tokens — on the model's device when it
// samples there (only the chosen ids come back), else with the host Sampler over the returned
// logits. In deterministic mode every sequence runs in its own forward, so no reduction ever
// mixes sequences and outputs cannot depend on batch composition.
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "engine/kv/kv_cache_manager.h"
#include "engine/model/model.h"
#include "engine/sample/sampler.h"
#include "engine/sched/scheduler.h"

namespace di::engine {

// One draw of a step: `seq`'s next token from the logits row of scheduled sequence `row` (a
// completion forking from its parent draws from the parent's row).
struct SampleTask {
  const Sequence* seq = nullptr;
  int32_t row = 0;
};

// Where the last execute() spent its time on the host, in seconds.
struct RunnerTiming {
  double prepare_s = 0;  // batch assembly and sampling specs
  double forward_s = 0;  // the model call (with the device draws when the model samples)
  double sample_s = 0;   // host draws
};

class ModelRunner {
 public:
  ModelRunner(Model* model, KvCacheManager* kv, Sampler* sampler, bool per_sequence)
      : model_(model), kv_(kv), sampler_(sampler), per_sequence_(per_sequence) {}

  // Runs the forward of `out` and the draws of `tasks`; results[i] is task i's token or the
  // sampler's error for it. A failed forward returns its error (results are then unset).
  Status execute(const SchedulerOutput& out, std::span<const SampleTask> tasks,
                 std::vector<Result<SampledToken>>& results);

  const RunnerTiming& last_timing() const { return timing_; }

 private:
  Status run(const ForwardBatch& batch, const ScheduledSequence* first, size_t n, std::span<const SampleTask> tasks,
             int32_t row_offset, std::vector<Result<SampledToken>>& results);

  Model* model_;
  KvCacheManager* kv_;
  Sampler* sampler_;
  bool per_sequence_;
  std::vector<float> logits_;
  std::vector<uint8_t> masked_;
  std::vector<SampleSpec> specs_;
  RunnerTiming timing_;
};

}  // namespace di::engine
