// ModelRunner: turns a scheduled batch into the model's ForwardBatch (each sequence's new tokens
// and its paged cache view), runs it and draws the step's tokens — on the model's device when it
// samples there (only the chosen ids come back), else with the host Sampler over the returned
// logits. In deterministic mode every sequence runs in its own forward, so no reduction ever
// mixes sequences and outputs cannot depend on batch composition.
//
// With speculative decoding on, a decoding sequence's draft tokens ride in the same forward; the
// runner keeps the longest prefix the target agrees with (greedy: equal to its argmax; sampled:
// the rejection rule of engine/spec/rejection.h), puts back the ring entries of the rejected
// positions, then runs the model's draft layers over every position whose next token is now
// known and proposes each sampling sequence's draft for its next step. A greedy decode step on a
// device model does all of that but the rollback on the device, with one wait
// (Model::verify_greedy); other steps bring logits rows to the host.
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "engine/kv/kv_cache_manager.h"
#include "engine/metrics/metrics.h"
#include "engine/model/model.h"
#include "engine/sample/sampler.h"
#include "engine/sched/scheduler.h"
#include "engine/spec/draft_length.h"

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
  double draft_s = 0;    // the draft layers and the draft tokens' choice (model time)
};

// Speculative decoding with the model's draft layers.
struct DraftOptions {
  int32_t max_draft_tokens = 0;  // the largest draft (0: off)
  bool variable = false;         // choose each draft's length (draft_length.h); false: always the largest
  int64_t max_model_len = 0;
};

class ModelRunner {
 public:
  ModelRunner(Model* model, KvCacheManager* kv, Sampler* sampler, bool per_sequence)
      : model_(model), kv_(kv), sampler_(sampler), per_sequence_(per_sequence) {}

  // Turns drafting on (the model's drafts_supported() must be OK). A model that samples on its
  // device then returns logits rows and the host draws.
  void enable_drafts(const DraftOptions& options) { draft_ = options; }

  // Runs the forward of `out` and the draws of `tasks`; results[i] is task i's token or the
  // sampler's error for it, after the draft tokens accepted_drafts(i) (in order). A failed
  // forward returns its error (results are then unset).
  Status execute(const SchedulerOutput& out, std::span<const SampleTask> tasks,
                 std::vector<Result<SampledToken>>& results);

  // Task i's accepted draft tokens of the last execute(), to commit before results[i].
  const std::vector<SampledToken>& accepted_drafts(size_t task) const { return accepted_[task]; }
  // Draft tokens verified and accepted in the last execute(), and each drafting sequence's share.
  int64_t last_verified() const { return verified_; }
  int64_t last_accepted() const { return num_accepted_; }
  const std::vector<DraftOutcome>& last_drafts() const { return drafts_; }

  const RunnerTiming& last_timing() const { return timing_; }

 private:
  Status run(const ForwardBatch& batch, const ScheduledSequence* first, size_t n, std::span<const SampleTask> tasks,
             int32_t row_offset, std::vector<Result<SampledToken>>& results);
  // Task draws against the draft fed after `seq`'s last token: rows[0..k] are the target's.
  Result<SampledToken> verify(Sequence& seq, const float* rows, int32_t k, std::vector<SampledToken>& accepted);
  // How many draft tokens `seq` may propose after its next draw (max_tokens, max_model_len).
  int32_t draft_room(const Sequence& seq) const;
  // Whether this step's draws and drafts run on the model's device (Model::verify_greedy): a
  // decode step of greedy draws without edits or constraints, one task per sequence; fills greedy_.
  bool greedy_on_device(const ScheduledSequence* first, size_t n, std::span<const SampleTask> tasks, int32_t row_offset);
  Status run_greedy_on_device(const ForwardBatch& batch, const ScheduledSequence* first, size_t n, int32_t row_offset,
                              std::vector<Result<SampledToken>>& results);
  Status propose(const ForwardBatch& batch, const ScheduledSequence* first, size_t n,
                 std::span<const SampleTask> tasks, size_t task_offset, std::vector<Result<SampledToken>>& results);

  Model* model_;
  KvCacheManager* kv_;
  Sampler* sampler_;
  bool per_sequence_;
  DraftOptions draft_;
  SpecCostModel cost_;
  DraftCalibration calibration_;
  std::vector<float> logits_;
  std::vector<uint8_t> masked_;
  std::vector<SampleSpec> specs_;
  std::vector<std::vector<SampledToken>> accepted_;
  std::vector<DraftOutcome> drafts_;
  std::vector<GreedyVerify> greedy_;
  std::vector<SavedRings> saved_rings_;  // per scheduled sequence with a draft (reused across steps)
  std::vector<double> probs_;
  int64_t verified_ = 0, num_accepted_ = 0;
  int32_t step_seqs_ = 0;
  static constexpr int64_t kProbeEvery = 64;  // steps between re-measurements while paused
  int64_t step_count_ = 0;
  bool propose_now_ = false;
  RunnerTiming timing_;
};

}  // namespace di::engine
