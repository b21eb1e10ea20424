// How many draft tokens a sequence proposes for its next step. Fixed: always the largest draft.
// Variable: from the draft head's own confidence in each token (the probability it gave the token),
// calibrated per draft position by what the target has accepted there, and the measured cost of a
// forward (fixed part + per token), of the sampler (per logits row) and of a draft step: the draft
// stops growing once one more token lowers the expected tokens per second of the step,
//   E(k) = 1 + sum_{j<=k} prod_{i<=j} c_i   over
//   cost(k) = (fixed + min(k, 1) draft) / B + max(k - 1, 0) draft + (k + 1) (token + row),
// with B the sequences sharing the step: a forward's fixed part and the first draft pass (which
// runs for every sequence with the verify forward) are paid once for all of them; a later pass
// runs only because a sequence drafts that far, so it counts whole (measured on the demo model at
// batch 4, sharing it too made the variable length 0.55x of no drafts, below every fixed k).
#pragma once

#include <cstdint>
#include <span>

namespace di::engine {

// Step costs, measured as the engine runs: decayed least squares of forward seconds on batch
// tokens (fixed + per token), and decayed means per sampled row and per draft step.
class SpecCostModel {
 public:
  void observe_forward(int64_t tokens, double seconds);
  void observe_rows(int64_t rows, double seconds);
  void observe_draft_steps(int64_t steps, double seconds);

  double fixed_seconds() const;
  double token_seconds() const;
  double row_seconds() const;
  double draft_seconds() const;

 private:
  static constexpr double kDecay = 0.98;
  // Forward: decayed sums for seconds = fixed + token * tokens.
  double n_ = 0, sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;
  double rows_ = 0, row_s_ = 0, steps_ = 0, step_s_ = 0;
};

// How far the draft head's confidence over- or understates what the target accepts, per draft
// position: decayed sums, over the positions a verify reached (every earlier token accepted), of
// the confidence there and of whether the target accepted it.
class DraftCalibration {
 public:
  // One verified draft: confidence[j] of each drafted token, the first `accepted` of them kept.
  void observe(std::span<const double> confidence, int32_t accepted);
  // `confidence` at draft position j scaled by that position's accepted / confident sums, in
  // [0, 1]; one pseudo-observation on each side, so nothing observed leaves it as it is.
  double calibrated(size_t j, double confidence) const;

 private:
  static constexpr size_t kPositions = 8;  // later positions share the last one's sums
  static constexpr double kDecay = 0.99;
  double confident_[kPositions] = {}, accepted_[kPositions] = {};
};

// True when a draft of `confidence.size()` tokens (confidence[i]: the draft head's probability of
// token i, calibrated by `calibration`) is expected to give more tokens per second than one token
// shorter.
bool draft_worth_extending(const SpecCostModel& cost, const DraftCalibration& calibration,
                           std::span<const double> confidence, int32_t batch_seqs);

}  // namespace di::engine
