// Scheduler: token budget and max_num_seqs respected, chunked prefill, newest-first preemption
// that later resumes, and the data-parallel vote on simulated ranks.
#include <gtest/gtest.h>

#include <memory>

#include "engine/kv/kv_cache_manager.h"
#include "engine/sched/dp_vote.h"
#include "engine/sched/scheduler.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

struct Rig {
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<Scheduler> sched;
  std::vector<std::unique_ptr<Sequence>> seqs;

  Rig(int64_t bytes, int32_t max_seqs, int64_t budget, bool prefix = false) {
    testing::ToyModel m;
    auto layout = make_cache_layout(m.cache_groups(), 4);
    KvCacheConfig c;
    c.kv_cache_bytes = bytes;
    c.max_num_seqs = max_seqs;
    c.max_model_len = 64;
    c.enable_prefix_caching = prefix;
    kv = std::move(KvCacheManager::create(*layout, c)).value();
    sched = std::make_unique<Scheduler>(SchedulerConfig{max_seqs, budget, false}, kv.get());
  }
  Sequence* add(int prompt_len) {
    auto s = std::make_unique<Sequence>();
    for (int i = 0; i < prompt_len; ++i) s->token_ids.push_back(1 + (i % 50));
    s->num_prompt_tokens = prompt_len;
    sched->add(s.get());
    seqs.push_back(std::move(s));
    return seqs.back().get();
  }
  // One step without a model: advance what was scheduled; a sequence that reached its end
  // "samples" token 7.
  SchedulerOutput step() {
    SchedulerOutput out = sched->schedule();
    for (const auto& s : out.scheduled) {
      const bool samples = s.samples();
      sched->advance(s);
      if (samples) s.seq->append_token(7);
    }
    return out;
  }
};

TEST(Scheduler, StepsRespectTokenBudgetAndMaxNumSeqs) {
  Rig r(1 << 20, 2, 10);
  r.add(25);
  r.add(3);
  r.add(3);
  auto out = r.step();
  EXPECT_LE(out.num_batched_tokens, 10);
  EXPECT_EQ(out.scheduled.size(), 1u);  // the long prompt takes the whole budget, chunked
  EXPECT_EQ(out.scheduled[0].num_tokens, 10);
  out = r.step();  // 10 more of the long prompt
  out = r.step();  // last 5 of it + the second prompt (3); third waits for a place
  EXPECT_EQ(out.num_batched_tokens, 8);
  EXPECT_EQ(r.sched->num_running(), 2u);
  EXPECT_EQ(r.sched->num_waiting(), 1u);
  out = r.step();  // two decodes
  EXPECT_EQ(out.num_batched_tokens, 2);
}

TEST(Scheduler, OutOfBlocksPreemptsTheNewestAndItResumes) {
  // Room for 16 blocks of 4 tokens (+ slots): one 64-token sequence, not three growing ones.
  testing::ToyModel m;
  auto layout = make_cache_layout(m.cache_groups(), 4);
  const int64_t bytes = 16 * layout->block_bytes + 3 * layout->slot_bytes;
  Rig r(bytes, 3, 64);
  Sequence* a = r.add(20);
  Sequence* b = r.add(20);
  Sequence* c = r.add(20);
  bool preempted_c = false;
  for (int i = 0; i < 200 && !(a->num_output_tokens() >= 30); ++i) {
    auto out = r.step();
    for (Sequence* p : out.preempted) {
      EXPECT_NE(p, a);  // the oldest is never the victim while others run
      preempted_c = preempted_c || p == c;
    }
    if (a->num_output_tokens() >= 30) r.sched->finish(a, FinishReason::kLength);
  }
  EXPECT_TRUE(preempted_c);
  EXPECT_GT(r.sched->num_preemptions(), 0);
  // Everyone else resumes after a finishes.
  for (int i = 0; i < 400 && r.sched->has_work(); ++i) {
    r.step();
    for (Sequence* s : {b, c})
      if (s->status == SequenceStatus::kRunning && s->num_output_tokens() >= 10) r.sched->finish(s, FinishReason::kLength);
  }
  EXPECT_FALSE(r.sched->has_work());
  EXPECT_EQ(r.kv->num_free_blocks(), r.kv->num_blocks());
}

TEST(DpVote, AllNeedsEveryRankAnyNeedsOneAndAllDefersBoundedly) {
  std::vector<DpRankReport> ranks = {{true, true}, {false, true}, {false, false}};
  DpVoter all(DpVoteMode::kAll, 2), any(DpVoteMode::kAny);
  auto d = all.vote(ranks);
  EXPECT_FALSE(d.allow_prefill);  // decode fallback
  EXPECT_FALSE(d.idle);
  EXPECT_EQ(d.dummy, (std::vector<bool>{false, false, true}));
  EXPECT_FALSE(all.vote(ranks).allow_prefill);
  EXPECT_TRUE(all.vote(ranks).allow_prefill);  // deferred twice: now it prefills
  EXPECT_FALSE(all.vote(ranks).allow_prefill);  // and the count starts over
  EXPECT_TRUE(any.vote(ranks).allow_prefill);
  std::vector<DpRankReport> none = {{false, false}, {false, false}};
  EXPECT_TRUE(any.vote(none).idle);
  std::vector<DpRankReport> both = {{true, true}, {true, true}};
  EXPECT_TRUE(DpVoter(DpVoteMode::kAll).vote(both).allow_prefill);
}

// Simulated ranks, each with its own scheduler, stepping in lockstep under the vote: every step
// is the same kind on every rank (no prefill where the vote said decode) and every request ends.
TEST(DpVote, SimulatedRanksStayAlignedAndFinish) {
  for (DpVoteMode mode : {DpVoteMode::kAll, DpVoteMode::kAny}) {
    DpVoter voter(mode, 4);
    std::vector<std::unique_ptr<Rig>> ranks;
    for (int i = 0; i < 3; ++i) ranks.push_back(std::make_unique<Rig>(1 << 20, 4, 16));
    // Uneven arrivals: rank 0 gets 4 prompts at once, rank 1 one per 3 steps, rank 2 two late.
    int arrivals1 = 0, arrivals2 = 0;
    for (int i = 0; i < 4; ++i) ranks[0]->add(10 + i);
    for (int step = 0; step < 500; ++step) {
      if (step % 3 == 0 && arrivals1 < 4) { ranks[1]->add(6); ++arrivals1; }
      if (step == 20 || step == 21) { ranks[2]->add(9); ++arrivals2; }
      std::vector<DpRankReport> reports;
      for (auto& r : ranks) reports.push_back({r->sched->has_prefill_work(), r->sched->has_work()});
      DpStepDecision d = voter.vote(reports);
      if (d.idle && arrivals1 == 4 && arrivals2 == 2) break;
      for (size_t i = 0; i < ranks.size(); ++i) {
        Rig& r = *ranks[i];
        const size_t running_before = r.sched->num_running();
        SchedulerOutput out = r.sched->schedule(d.allow_prefill);
        if (!d.allow_prefill) {
          EXPECT_EQ(r.sched->num_running(), running_before);  // nothing admitted
          for (const auto& s : out.scheduled) EXPECT_EQ(s.num_tokens, 1);  // decode only
        }
        for (const auto& s : out.scheduled) {
          const bool samples = s.samples();
          r.sched->advance(s);
          if (samples) s.seq->append_token(7);
          if (s.seq->num_output_tokens() >= 5) r.sched->finish(s.seq, FinishReason::kLength);
        }
      }
    }
    for (auto& r : ranks) {
      EXPECT_FALSE(r->sched->has_work());
      for (auto& s : r->seqs) EXPECT_EQ(s->status, SequenceStatus::kFinished);
    }
  }
}

}  // namespace
}  // namespace di::engine
