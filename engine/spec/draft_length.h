// How many draft tokens a sequence proposes for its next step. Fixed: always the largest draft.
// Variable: from the draft head's own confidence in each token (the probability it gave the token,
// an uncalibrated estimate of the target accepting it) and the measured cost of a forward (fixed
// part + per token), of the sampler (per logits row) and of a draft step: the draft stops growing
// once one more token lowers the expected tokens per second of the step,
//   E(k) = 1 + sum_{j<=k} prod_{i<=j} c_i   over   cost(k) = fixed / B + (k + 1) (token + row) + k draft,
// with B the sequences sharing the step's fixed cost.
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

// True when a draft of `confidence.size()` tokens (confidence[i]: the draft head's probability of
// token i) is expected to give more tokens per second than one token shorter.
bool draft_worth_extending(const SpecCostModel& cost, std::span<const double> confidence, int32_t batch_seqs);

}  // namespace di::engine
