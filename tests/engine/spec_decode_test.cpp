// Speculative decoding's pure parts: the rejection rule keeps the target distribution exactly (a
// chi-square test on a tiny vocabulary with fixed keys; the bound is one a wrong rule fails by
// orders of magnitude), greedy drafts (a point-mass q) included; the draws are reproducible by
// key; and the cost model behind the variable draft length.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/spec/draft_length.h"
#include "engine/spec/rejection.h"

namespace di::engine {
namespace {

constexpr int kTrials = 40000;
// chi-square at 5 degrees of freedom, p = 0.001 (the test is deterministic: fixed keys).
constexpr double kChi2Bound = 20.52;

double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p, int64_t n) {
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = p[i] * static_cast<double>(n);
    if (expected == 0) {
      if (counts[i] > 0) return INFINITY;
      continue;
    }
    const double d = static_cast<double>(counts[i]) - expected;
    chi2 += d * d / expected;
  }
  return chi2;
}

// The token distribution of the rule over kTrials keys: draft drawn from q (or q's argmax when
// point_mass), then accepted or replaced.
std::vector<int64_t> outcome_counts(const std::vector<double>& p, const std::vector<float>& q, bool point_mass,
                                    double* accept_rate) {
  std::vector<int64_t> counts(p.size(), 0);
  std::vector<double> qd(q.begin(), q.end());
  int64_t accepted = 0;
  for (int t = 0; t < kTrials; ++t) {
    const uint64_t seed = 77, index = 3, position = static_cast<uint64_t>(t);
    int32_t draft;
    if (point_mass) {
      draft = 0;
      for (size_t i = 1; i < q.size(); ++i)
        if (q[i] > q[draft]) draft = static_cast<int32_t>(i);
    } else {
      draft = draw_from(qd, spec_uniform(SpecDraw::kDraft, seed, index, position));
    }
    const DraftVerdict v = verify_draft(p, point_mass ? std::span<const float>() : std::span<const float>(q), draft,
                                        seed, index, position);
    EXPECT_GE(v.token, 0);
    if (v.token < 0) continue;
    ++counts[v.token];
    accepted += v.accepted;
  }
  *accept_rate = static_cast<double>(accepted) / kTrials;
  return counts;
}

const std::vector<double> kTarget = {0.05, 0.30, 0.10, 0.25, 0.0, 0.30};
const std::vector<float> kDraft = {0.40f, 0.10f, 0.20f, 0.05f, 0.15f, 0.10f};  // far from p, with mass where p has none

TEST(SpecRejection, SampledDraftsKeepTheTargetDistribution) {
  double rate;
  const auto counts = outcome_counts(kTarget, kDraft, false, &rate);
  const double chi2 = chi_square(counts, kTarget, kTrials);
  EXPECT_LT(chi2, kChi2Bound) << "tokens are not distributed as the target";
  EXPECT_EQ(counts[4], 0) << "a token the target excludes came out";
  // Accepting drafts at rate sum min(p, q) = 0.05 + 0.10 + 0.10 + 0.05 + 0 + 0.10.
  EXPECT_NEAR(rate, 0.40, 0.02);
  std::printf("chi2 %.2f (bound %.2f), acceptance %.3f\n", chi2, kChi2Bound, rate);
}

TEST(SpecRejection, ArgmaxDraftsKeepTheTargetDistribution) {
  double rate;
  const auto counts = outcome_counts(kTarget, kDraft, true, &rate);
  EXPECT_LT(chi_square(counts, kTarget, kTrials), kChi2Bound);
  EXPECT_NEAR(rate, kTarget[0], 0.01);  // the argmax draft is token 0
}

TEST(SpecRejection, EqualDistributionsAcceptEveryDraft) {
  std::vector<float> q(kTarget.begin(), kTarget.end());
  double rate;
  const auto counts = outcome_counts(kTarget, q, false, &rate);
  EXPECT_EQ(rate, 1.0);
  EXPECT_LT(chi_square(counts, kTarget, kTrials), kChi2Bound);
}

// The bound means something: taking the draft always (the draft's distribution) or never
// replacing from the residual (resampling from p itself on rejection) fails it by far.
TEST(SpecRejection, TheBoundRejectsWrongRules) {
  std::vector<int64_t> always(kTarget.size(), 0), from_p(kTarget.size(), 0);
  std::vector<double> qd(kDraft.begin(), kDraft.end());
  for (int t = 0; t < kTrials; ++t) {
    const auto pos = static_cast<uint64_t>(t);
    const int32_t draft = draw_from(qd, spec_uniform(SpecDraw::kDraft, 77, 3, pos));
    ++always[draft];
    const bool keep = spec_uniform(SpecDraw::kAccept, 77, 3, pos) * qd[draft] < kTarget[draft];
    ++from_p[keep ? draft : draw_from(kTarget, spec_uniform(SpecDraw::kResidual, 77, 3, pos))];
  }
  EXPECT_GT(chi_square(always, kTarget, kTrials), 100 * kChi2Bound);
  EXPECT_GT(chi_square(from_p, kTarget, kTrials), 10 * kChi2Bound);
}

TEST(SpecRejection, DrawsAreKeyedAndSeparateFromEachOther) {
  EXPECT_EQ(spec_uniform(SpecDraw::kAccept, 1, 2, 3), spec_uniform(SpecDraw::kAccept, 1, 2, 3));
  EXPECT_NE(spec_uniform(SpecDraw::kAccept, 1, 2, 3), spec_uniform(SpecDraw::kResidual, 1, 2, 3));
  EXPECT_NE(spec_uniform(SpecDraw::kAccept, 1, 2, 3), spec_uniform(SpecDraw::kAccept, 1, 2, 4));
  const std::vector<double> p = {0, 0.5, 0, 0.5};
  EXPECT_EQ(draw_from(p, 0.0), 1);
  EXPECT_EQ(draw_from(p, 0.49), 1);
  EXPECT_EQ(draw_from(p, 0.51), 3);
  EXPECT_EQ(draw_from(p, 0.9999999), 3);
  EXPECT_EQ(draw_from(std::vector<double>(3, 0.0), 0.5), -1);
}

TEST(SpecCostModel, RecoversTheFixedAndPerTokenCost) {
  SpecCostModel m;
  for (int i = 0; i < 50; ++i) {
    const int64_t tokens = 1 + i % 6;
    m.observe_forward(tokens, 0.010 + 0.002 * static_cast<double>(tokens));
  }
  EXPECT_NEAR(m.fixed_seconds(), 0.010, 1e-6);
  EXPECT_NEAR(m.token_seconds(), 0.002, 1e-7);
  m.observe_rows(10, 0.001);
  EXPECT_NEAR(m.row_seconds(), 1e-4, 1e-9);
  m.observe_draft_steps(4, 0.004);
  EXPECT_NEAR(m.draft_seconds(), 1e-3, 1e-9);
}

TEST(SpecCostModel, BatchesOfOneSizeStillSplitTheCost) {
  SpecCostModel m;
  for (int i = 0; i < 20; ++i) m.observe_forward(1, 0.011);
  EXPECT_GT(m.token_seconds(), 0.0);
  EXPECT_NEAR(m.fixed_seconds() + m.token_seconds(), 0.011, 1e-9);
}

// A model whose forward takes half a millisecond, before any draft step was timed: the draft's
// prior cost follows the forward's, so a sure draft token pays (an absolute 2 ms prior said no).
TEST(SpecCostModel, UntimedDraftStepsCostTheirShareOfTheMeasuredForward) {
  SpecCostModel m;
  const DraftCalibration cal;
  for (int i = 0; i < 50; ++i) m.observe_forward(1 + i % 4, 0.0005 + 0.00001 * (1 + i % 4));
  EXPECT_NEAR(m.draft_seconds(), m.fixed_seconds() * 0.2, 1e-9);
  const std::vector<double> sure = {0.9};
  EXPECT_TRUE(draft_worth_extending(m, cal, sure, 1));
  m.observe_draft_steps(1, 0.002);  // once timed, the measurement decides
  EXPECT_NEAR(m.draft_seconds(), 0.002, 1e-12);
  EXPECT_FALSE(draft_worth_extending(m, cal, sure, 1));
}

TEST(SpecDraftLength, LongerDraftsOnlyWhileConfidentEnough) {
  SpecCostModel m;  // fixed cost 10 ms, 1 ms a token, 1 ms a draft step
  const DraftCalibration cal;
  for (int i = 0; i < 50; ++i) m.observe_forward(1 + i % 4, 0.010 + 0.001 * (1 + i % 4));
  m.observe_rows(1, 0.0);
  m.observe_draft_steps(1, 0.001);
  const std::vector<double> sure = {0.95, 0.95, 0.95};
  EXPECT_TRUE(draft_worth_extending(m, cal, std::span(sure).first(1), 1));
  EXPECT_TRUE(draft_worth_extending(m, cal, sure, 1));
  const std::vector<double> unsure = {0.9, 0.05};
  EXPECT_FALSE(draft_worth_extending(m, cal, unsure, 1));
  // Sixty sequences share the fixed cost: a token's own cost dominates, so only sure drafts pay.
  const std::vector<double> fair = {0.6};
  EXPECT_TRUE(draft_worth_extending(m, cal, fair, 1));
  EXPECT_FALSE(draft_worth_extending(m, cal, fair, 60));
}

// A draft step is one pass for every drafting sequence: with the forward's fixed cost it is
// shared by the batch. Four sequences, a step of 0.4 ms fixed, 0.02 ms a token and a 0.3 ms draft
// pass (a memory-bound GPU forward): a 0.8-confident token pays at batch 4 as at batch 1; counted
// whole for each sequence, the draft pass made drafting at batch 4 look like a loss.
TEST(SpecDraftLength, TheDraftPassIsSharedByTheBatch) {
  SpecCostModel m;
  for (int i = 0; i < 50; ++i) m.observe_forward(4 + i % 4, 0.0004 + 0.00002 * (4 + i % 4));
  m.observe_rows(1, 0.0);
  m.observe_draft_steps(1, 0.0003);
  const DraftCalibration cal;
  const std::vector<double> likely = {0.8};
  EXPECT_TRUE(draft_worth_extending(m, cal, likely, 1));
  EXPECT_TRUE(draft_worth_extending(m, cal, likely, 4));
}

// A second draft token needs a pass of its own, which only the sequences drafting that far need:
// at batch 4 a sure pair pays at batch 1 but not when the pass is the sequence's alone to pay,
// while its first token (the batch's shared pass) still pays.
TEST(SpecDraftLength, PassesPastTheFirstArePaidByTheSequenceThatTakesThem) {
  SpecCostModel m;
  for (int i = 0; i < 50; ++i) m.observe_forward(4 + i % 4, 0.0004 + 0.00002 * (4 + i % 4));
  m.observe_rows(1, 0.0);
  m.observe_draft_steps(1, 0.0003);
  const DraftCalibration cal;
  const std::vector<double> pair = {0.95, 0.95};
  EXPECT_TRUE(draft_worth_extending(m, cal, pair, 1));
  EXPECT_TRUE(draft_worth_extending(m, cal, std::span(pair).first(1), 4));
  EXPECT_FALSE(draft_worth_extending(m, cal, pair, 4));
}

// An overconfident draft head: it says 0.9 where the target accepts half of the first tokens and
// a fifth of the second. The calibration learns each position's rate, and the draft that looked
// worth two tokens is worth one.
TEST(SpecDraftLength, CalibrationScalesConfidenceToWhatTheTargetAccepts) {
  DraftCalibration cal;
  EXPECT_DOUBLE_EQ(cal.calibrated(0, 0.9), 0.9);  // nothing observed: as given
  const std::vector<double> conf = {0.9, 0.9};
  for (int i = 0; i < 500; ++i) {
    // Of ten drafts: five stop at the first token, four at the second, one keeps both.
    const int r = i % 10;
    cal.observe(conf, r < 5 ? 0 : r < 9 ? 1 : 2);
  }
  EXPECT_NEAR(cal.calibrated(0, 0.9), 0.5, 0.02);
  EXPECT_NEAR(cal.calibrated(1, 0.9), 0.2, 0.03);
  EXPECT_NEAR(cal.calibrated(0, 0.45), 0.25, 0.02);
  EXPECT_DOUBLE_EQ(cal.calibrated(0, 0.0), 0.0);

  SpecCostModel m;  // fixed cost 10 ms, 1 ms a token, 1 ms a draft step
  for (int i = 0; i < 50; ++i) m.observe_forward(1 + i % 4, 0.010 + 0.001 * (1 + i % 4));
  m.observe_rows(1, 0.0);
  m.observe_draft_steps(1, 0.001);
  const DraftCalibration raw;
  const std::vector<double> two = {0.9, 0.9};
  EXPECT_TRUE(draft_worth_extending(m, raw, two, 1));
  EXPECT_FALSE(draft_worth_extending(m, cal, two, 1));
  EXPECT_TRUE(draft_worth_extending(m, cal, std::span(two).first(1), 1));
}

}  // namespace
}  // namespace di::engine
