// The variable draft length: see draft_length.h.
#include "engine/spec/draft_length.h"

#include <algorithm>

namespace di::engine {

namespace {

// Until a cost has been measured: a forward's fixed part dominates, as on any model whose weights
// take longer to read than a few tokens take to compute (what makes drafting pay at all).
constexpr double kPriorFixed = 1e-2, kPriorToken = 1e-3, kPriorRow = 1e-4, kPriorDraft = 2e-3;

}  // namespace

void SpecCostModel::observe_forward(int64_t tokens, double seconds) {
  if (tokens < 1 || !(seconds >= 0)) return;
  const double x = static_cast<double>(tokens);
  n_ = n_ * kDecay + 1;
  sx_ = sx_ * kDecay + x;
  sy_ = sy_ * kDecay + seconds;
  sxx_ = sxx_ * kDecay + x * x;
  sxy_ = sxy_ * kDecay + x * seconds;
}

void SpecCostModel::observe_rows(int64_t rows, double seconds) {
  if (rows < 1 || !(seconds >= 0)) return;
  rows_ = rows_ * kDecay + static_cast<double>(rows);
  row_s_ = row_s_ * kDecay + seconds;
}

void SpecCostModel::observe_draft_steps(int64_t steps, double seconds) {
  if (steps < 1 || !(seconds >= 0)) return;
  steps_ = steps_ * kDecay + static_cast<double>(steps);
  step_s_ = step_s_ * kDecay + seconds;
}

double SpecCostModel::token_seconds() const {
  const double var = n_ * sxx_ - sx_ * sx_;
  // Batches all of one size say nothing about the slope: keep the prior's share of the mean.
  if (n_ < 4 || var <= 1e-9 * n_ * sxx_) {
    if (n_ <= 0) return kPriorToken;
    const double mean_s = sy_ / n_, mean_x = sx_ / n_;
    return mean_s * kPriorToken / (kPriorFixed + kPriorToken * mean_x);
  }
  return std::max(0.0, (n_ * sxy_ - sx_ * sy_) / var);
}

double SpecCostModel::fixed_seconds() const {
  if (n_ <= 0) return kPriorFixed;
  return std::max(0.0, (sy_ - token_seconds() * sx_) / n_);
}

double SpecCostModel::row_seconds() const { return rows_ > 0 ? row_s_ / rows_ : kPriorRow; }
// Until a draft step has been timed, the prior's share of the measured forward: an absolute
// prior would say nothing about a model whose forward takes far less (or more) than 10 ms.
double SpecCostModel::draft_seconds() const {
  if (steps_ > 0) return step_s_ / steps_;
  return n_ > 0 ? fixed_seconds() * (kPriorDraft / kPriorFixed) : kPriorDraft;
}

void DraftCalibration::observe(std::span<const double> confidence, int32_t accepted) {
  // Position j is reached when the j tokens before it were accepted: j <= accepted.
  for (size_t j = 0; j < confidence.size() && j <= static_cast<size_t>(std::max(0, accepted)); ++j) {
    const size_t b = std::min(j, kPositions - 1);
    confident_[b] = confident_[b] * kDecay + std::clamp(confidence[j], 0.0, 1.0);
    accepted_[b] = accepted_[b] * kDecay + (j < static_cast<size_t>(accepted) ? 1.0 : 0.0);
  }
}

double DraftCalibration::calibrated(size_t j, double confidence) const {
  const size_t b = std::min(j, kPositions - 1);
  return std::clamp(confidence * (accepted_[b] + 1.0) / (confident_[b] + 1.0), 0.0, 1.0);
}

bool draft_worth_extending(const SpecCostModel& cost, const DraftCalibration& calibration,
                           std::span<const double> confidence, int32_t batch_seqs) {
  const size_t k = confidence.size();
  if (k == 0) return false;
  const double share = 1.0 / std::max(1, batch_seqs);
  const double fixed = cost.fixed_seconds() * share, draft = cost.draft_seconds();
  const double per = cost.token_seconds() + cost.row_seconds();
  double expected = 1, run = 1, shorter = 1;
  for (size_t j = 0; j < k; ++j) {
    run *= calibration.calibrated(j, std::clamp(confidence[j], 0.0, 1.0));
    shorter = expected;
    expected += run;
  }
  // The first draft token's pass runs for the whole batch (with the verify forward), so the batch
  // shares it; each later pass runs because some sequence drafts that far, and one that goes on
  // alone pays it whole (a memory-bound pass costs the same for one sequence as for all).
  auto step_cost = [&](double n) {
    return fixed + (n + 1) * per + std::min(n, 1.0) * draft * share + std::max(0.0, n - 1) * draft;
  };
  return expected / step_cost(static_cast<double>(k)) > shorter / step_cost(static_cast<double>(k - 1));
}

}  // namespace di::engine
