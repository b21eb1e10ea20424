// Data-parallel ranks as engines of one process, stepping in lockstep through an
// InProcessDpCoordinator: every request finishes with the tokens one engine alone gives, every
// rank runs the same rounds with the same decision, no rank prefills where the vote said decode,
// and a rank without work joins with empty steps.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/sched/dp_coordinator.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

using namespace testing::engine_util;

// Submits prompts[i] to rank owner[i] of `engines`, all before draining any.
std::vector<Completion> run_on_ranks(std::vector<std::unique_ptr<LLMEngine>>& engines,
                                     const std::vector<std::vector<int32_t>>& prompts, const std::vector<int>& owner) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto r = engines[owner[i]]->submit(prompts[i], greedy());
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    streams.push_back(*r);
  }
  std::vector<Completion> out;
  for (auto& s : streams) out.push_back(drain(*s)[0]);
  return out;
}

void expect_aligned(const InProcessDpCoordinator& dp, int dummy_rank_first_wave) {
  const auto records = dp.records();
  const auto decisions = dp.decisions();
  size_t stepped_rounds = 0;
  for (const DpStepDecision& d : decisions) stepped_rounds += d.idle ? 0 : 1;
  ASSERT_GT(stepped_rounds, 0u);
  for (size_t r = 0; r < records.size(); ++r) {
    ASSERT_EQ(records[r].size(), stepped_rounds) << "rank " << r << " skipped or added a step";
    for (size_t k = 0; k < records[r].size(); ++k) {
      const DpStepRecord& s = records[r][k];
      EXPECT_EQ(s.round, records[0][k].round) << "rank " << r << " step " << k;
      EXPECT_EQ(s.allow_prefill, records[0][k].allow_prefill) << "rank " << r << " step " << k;
      EXPECT_EQ(s.allow_prefill, decisions[s.round].allow_prefill);
      if (!s.allow_prefill) {
        EXPECT_FALSE(s.prefilled) << "rank " << r << " prefilled against the vote";
      }
      if (decisions[s.round].dummy[r]) {
        EXPECT_TRUE(s.dummy);
      }
    }
  }
  // The rank that got no request in the first wave ran only empty steps until its first prefill.
  bool any_dummy = false;
  for (const DpStepRecord& s : records[dummy_rank_first_wave]) any_dummy = any_dummy || s.dummy;
  EXPECT_TRUE(any_dummy);
}

TEST(DpEngine, SimulatedRanksFinishEveryRequestWithSingleEngineTokensAndStayAligned) {
  const auto prompts = mixed_prompts();
  EngineConfig single;
  single.max_num_batched_tokens = 32;
  const std::vector<Completion> want = run_batch(*make_engine(single), prompts, [](int) { return greedy(); });
  for (DpVoteMode mode : {DpVoteMode::kAll, DpVoteMode::kAny}) {
    for (int num_ranks : {2, 3}) {
      auto dp = std::make_shared<InProcessDpCoordinator>(num_ranks, mode, 4);
      std::vector<std::unique_ptr<LLMEngine>> engines;
      for (int r = 0; r < num_ranks; ++r) {
        EngineConfig c = single;
        c.dp_coordinator = dp;
        c.dp_rank = r;
        engines.push_back(make_engine(c));
      }
      // Wave 1: the last rank gets nothing and must keep joining; uneven shares on the others.
      std::vector<std::vector<int32_t>> wave1(prompts.begin(), prompts.begin() + 11);
      std::vector<int> owner1(wave1.size(), 0);
      if (num_ranks == 3) owner1[1] = owner1[4] = owner1[7] = 1;
      std::vector<Completion> got = run_on_ranks(engines, wave1, owner1);
      // Wave 2: the rest, all on the last rank; the others run empty steps beside it.
      std::vector<std::vector<int32_t>> wave2(prompts.begin() + 11, prompts.end());
      std::vector<Completion> got2 = run_on_ranks(engines, wave2, std::vector<int>(wave2.size(), num_ranks - 1));
      got.insert(got.end(), got2.begin(), got2.end());
      for (size_t i = 0; i < prompts.size(); ++i) {
        EXPECT_EQ(got[i].tokens, want[i].tokens) << "prompt " << i << ", " << num_ranks << " ranks";
        EXPECT_NE(got[i].finish, FinishReason::kNone);
      }
      for (auto& e : engines) wait_pool_full(*e);
      engines.clear();  // joins the step threads: the records are complete
      expect_aligned(*dp, num_ranks - 1);
    }
  }
}

TEST(DpEngine, RankOutsideTheCoordinatorIsAnError) {
  auto dp = std::make_shared<InProcessDpCoordinator>(2, DpVoteMode::kAll);
  EngineConfig c;
  c.max_model_len = 256;
  c.dp_coordinator = dp;
  c.dp_rank = 2;
  auto r = LLMEngine::create(std::make_unique<testing::ToyModel>(4096, 0), c, nullptr);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "dp_rank: expected 0..1, got 2");
}

}  // namespace
}  // namespace di::engine
