// LLMEngine end to end on ToyModel (a test double whose logits hash everything it reads back
// from the paged cache, compared with a cache-free reference): batch invariance, preemption,
// prefix caching, n > 1, stop strings, cancellation returning every block, bad inputs, threads.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "engine/engine.h"
#include "engine/llm.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

using testing::ToyModel;
using testing::ToyTokenText;
using namespace testing::engine_util;

TEST(Engine, SixteenMixedRequestsBatchedEqualAloneAndTheReferenceGreedy) {
  auto prompts = mixed_prompts();
  EngineConfig c;
  c.max_num_batched_tokens = 32;  // forces chunked prefill mixed with decode
  auto batched = run_batch(*make_engine(c), prompts, [](int) { return greedy(); });
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto alone = run_batch(*make_engine(c), {prompts[i]}, [](int) { return greedy(); });
    EXPECT_EQ(batched[i].tokens, alone[0].tokens) << i;
    EXPECT_EQ(batched[i].tokens, testing::toy_reference_greedy(prompts[i], 12, false)) << i;
    EXPECT_NE(batched[i].finish, FinishReason::kNone);
  }
}

TEST(Engine, SeededSamplingInDeterministicModeIsBatchInvariant) {
  auto prompts = mixed_prompts();
  EngineConfig c;
  c.deterministic = true;
  c.max_num_batched_tokens = 16;
  auto params = [](int i) {
    SamplingParams p;
    p.temperature = 0.9;
    p.top_p = 0.95;
    p.top_k = 40;
    p.max_tokens = 10;
    p.seed = 1000 + i;
    return p;
  };
  auto batched = run_batch(*make_engine(c), prompts, params);
  int distinct_from_greedy = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto e = make_engine(c);
    auto alone = run_batch(*e, {prompts[i]}, [&](int) { return params(static_cast<int>(i)); });
    EXPECT_EQ(batched[i].tokens, alone[0].tokens) << i;
    distinct_from_greedy += batched[i].tokens != testing::toy_reference_greedy(prompts[i], 10, false);
  }
  EXPECT_GT(distinct_from_greedy, 0);  // it really sampled
}

TEST(Engine, SmallKvBudgetPreemptsAndEveryRequestStillMatches) {
  ToyModel m;
  auto layout = make_cache_layout(m.cache_groups(), 16);
  EngineConfig c;
  c.max_num_seqs = 8;
  c.max_model_len = 128;
  // Blocks for ~1.5 full-length sequences across 8 running ones.
  const int64_t bytes = 12 * layout->block_bytes + 16 * layout->slot_bytes;
  auto e = make_engine(c, bytes);
  auto prompts = mixed_prompts();
  auto params = [](int) {
    SamplingParams p = greedy(40);
    p.ignore_eos = true;
    return p;
  };
  auto out = run_batch(*e, prompts, params);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(out[i].tokens, testing::toy_reference_greedy(prompts[i], 40, true)) << i;
    EXPECT_EQ(out[i].finish, FinishReason::kLength);
  }
  auto m2 = nlohmann::json::parse(e->metrics_json());
  EXPECT_GT(m2["num_preemptions"].get<int64_t>(), 0);
}

TEST(Engine, PrefixCacheHitsAreReportedAndChangeNoOutput) {
  auto base = prompt_of(40, 3);
  std::vector<std::vector<int32_t>> followups;
  for (int i = 0; i < 4; ++i) {
    auto p = base;
    for (int k = 0; k <= i * 5; ++k) p.push_back(1 + (k * 5 + i) % 90);
    followups.push_back(p);
  }
  EngineConfig on, off;
  on.block_size = 8;
  off.block_size = 8;
  off.enable_prefix_caching = false;
  auto e_on = make_engine(on), e_off = make_engine(off);
  run_batch(*e_on, {base}, [](int) { return greedy(); });
  auto hit = run_batch(*e_on, followups, [](int) { return greedy(); });
  int64_t hits = 0;
  auto miss = run_batch(*e_off, followups, [](int) { return greedy(); });
  for (size_t i = 0; i < followups.size(); ++i) {
    EXPECT_EQ(hit[i].tokens, miss[i].tokens) << i;
    EXPECT_EQ(hit[i].tokens, testing::toy_reference_greedy(followups[i], 12, false)) << i;
    // At least the base prompt's checkpoint ((40 - 1) / 8 * 8); a follow-up admitted after
    // another one's prefill may hit that one's deeper checkpoint (tokens 0..39 are shared).
    EXPECT_GE(hit[i].cached, 32) << i;
    EXPECT_LE(hit[i].cached, 40) << i;
    EXPECT_EQ(hit[i].cached % 8, 0) << i;
    EXPECT_EQ(miss[i].cached, 0);
    hits += hit[i].cached;
  }
  auto m = nlohmann::json::parse(e_on->metrics_json());
  EXPECT_GT(m["prefix_cache_hit_rate"].get<double>(), 0.0);
  EXPECT_EQ(m["prefix_cache_hits"].get<int64_t>(), hits);
}

TEST(Engine, NGreaterThanOneForksFromThePrompt) {
  auto e = make_engine();
  auto prompt = prompt_of(21, 5);
  SamplingParams g = greedy(8);
  g.n = 3;
  auto s = e->submit(prompt, g);
  ASSERT_TRUE(s.is_ok());
  auto out = drain(**s, 3);
  for (const auto& o : out) EXPECT_EQ(o.tokens, testing::toy_reference_greedy(prompt, 8, false));
  SamplingParams r;
  r.n = 4;
  r.seed = 9;
  r.max_tokens = 8;
  r.ignore_eos = true;
  auto a = drain(**e->submit(prompt, r), 4);
  auto b = drain(**e->submit(prompt, r), 4);
  int differ = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens);
    EXPECT_EQ(a[i].tokens.size(), 8u);
    differ += a[i].tokens != a[0].tokens;
  }
  EXPECT_GT(differ, 0);
}

TEST(Engine, StopStringEndsTheTextBeforeIt) {
  auto e = make_engine();
  auto prompt = prompt_of(9, 1);
  auto full = run_batch(*e, {prompt}, [](int) { SamplingParams p = greedy(30); p.ignore_eos = true; return p; })[0];
  // The stop string: the text of the first plain-word token after the fourth output token.
  ToyTokenText tt;
  std::string stop;
  for (size_t k = 4; k < full.tokens.size() && stop.empty(); ++k)
    if (full.tokens[k] % 7 <= 2 && full.tokens[k] != 0) stop = std::string(tt.token_bytes(full.tokens[k]));
  ASSERT_FALSE(stop.empty());
  SamplingParams p = greedy(30);
  p.ignore_eos = true;
  p.stop = {stop};
  auto out = run_batch(*e, {prompt}, [&](int) { return p; })[0];
  EXPECT_EQ(out.finish, FinishReason::kStopSequence);
  const size_t at = full.text.find(stop);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(out.text, full.text.substr(0, at));
}

TEST(Engine, CancelDuringPrefillAndDecodeReturnsEveryBlock) {
  EngineConfig c;
  c.max_num_batched_tokens = 4;  // a 200-token prompt takes 50 steps of 2 ms
  auto e = make_engine(c, 0, 2);
  auto s = *e->submit(prompt_of(200, 2), greedy(20));
  e->cancel(s->id());
  auto out = drain(*s);
  EXPECT_EQ(out[0].finish, FinishReason::kCancelled);
  EXPECT_TRUE(out[0].tokens.empty()) << out[0].tokens.size() << " finish " << finish_reason_name(out[0].finish);
  wait_pool_full(*e);

  SamplingParams p = greedy(200);
  p.ignore_eos = true;
  auto d = *e->submit(prompt_of(5, 2), p);
  CompletionChunk chunk;
  ASSERT_EQ(d->poll(20000, &chunk), RequestStream::Poll::kChunk);  // decoding now
  e->cancel(d->id());
  e->cancel(d->id());  // idempotent
  auto rest = drain(*d);
  EXPECT_EQ(rest[0].finish, FinishReason::kCancelled);
  EXPECT_LT(rest[0].tokens.size() + 1, 200u);
  wait_pool_full(*e);
}

TEST(Engine, BadInputsAreClearErrors) {
  auto e = make_engine();
  auto expect_error = [&](std::vector<int32_t> prompt, SamplingParams p, const std::string& field) {
    auto r = e->submit(std::move(prompt), p);
    ASSERT_FALSE(r.is_ok()) << field;
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  };
  expect_error({}, greedy(), "prompt");
  expect_error({1, static_cast<int32_t>(testing::kToyVocab)}, greedy(), "prompt[1]");
  expect_error({1, -3}, greedy(), "prompt[1]");
  SamplingParams p = greedy();
  p.max_tokens = 0;
  expect_error({1}, p, "max_tokens");
  p = greedy();
  p.temperature = -0.5;
  expect_error({1}, p, "temperature");
  p.temperature = std::nan("");
  expect_error({1}, p, "temperature");
  p = greedy();
  p.top_p = 0;
  expect_error({1}, p, "top_p");
  p.top_p = 1.01;
  expect_error({1}, p, "top_p");
  p = greedy(300);
  expect_error({1}, p, "max_model_len");
}

TEST(Engine, SynchronousAndAsyncSchedulingGiveTheSameTokens) {
  EngineConfig sync_cfg;
  sync_cfg.async_scheduling = false;
  auto prompts = mixed_prompts();
  auto a = run_batch(*make_engine(sync_cfg), prompts, [](int) { return greedy(); });
  auto b = run_batch(*make_engine(), prompts, [](int) { return greedy(); });
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(a[i].tokens, b[i].tokens);
}

TEST(Engine, DestroyCancelsOpenRequestsAndMetricsRender) {
  std::shared_ptr<RequestStream> s;
  {
    auto e = make_engine({}, 0, 1);
    SamplingParams p = greedy(200);
    p.ignore_eos = true;
    s = *e->submit(prompt_of(30, 1), p);
    auto prom = e->metrics_prometheus();
    EXPECT_NE(prom.find("# TYPE deepinfer_time_to_first_token_seconds histogram"), std::string::npos);
    EXPECT_NE(prom.find("deepinfer_kv_cache_usage_ratio"), std::string::npos);
  }
  auto out = drain(*s);
  EXPECT_TRUE(out[0].finish == FinishReason::kCancelled || out[0].finish == FinishReason::kLength);
  EXPECT_TRUE(s->finished());
}

// 8 threads x 125 random operations on shared requests: submit, poll, cancel, drop. Every
// request must end (its stream reaches the end) and the pool must be full afterwards.
TEST(Engine, ConcurrentSubmitPollCancelDestroyAllEnd) {
  EngineConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 64;
  auto e = make_engine(c);
  std::mutex mu;
  std::vector<std::shared_ptr<RequestStream>> all;
  std::atomic<int> submitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<std::shared_ptr<RequestStream>> mine;
      for (int op = 0; op < 125; ++op) {
        const int kind = static_cast<int>(rng() % 4);
        if (kind == 0 || mine.empty()) {
          SamplingParams p;
          p.temperature = (rng() % 2) ? 0.0 : 0.8;
          p.max_tokens = 1 + static_cast<int>(rng() % 12);
          p.n = 1 + static_cast<int>(rng() % 2);
          auto r = e->submit(prompt_of(1 + static_cast<int>(rng() % 40), t * 1000 + op), p);
          if (r.is_ok()) {
            mine.push_back(*r);
            ++submitted;
            std::lock_guard<std::mutex> l(mu);
            all.push_back(*r);
          }
        } else if (kind == 1) {
          CompletionChunk ch;
          mine[rng() % mine.size()]->poll(static_cast<int64_t>(rng() % 3), &ch);
        } else if (kind == 2) {
          e->cancel(mine[rng() % mine.size()]->id());
        } else {
          mine.erase(mine.begin() + static_cast<long>(rng() % mine.size()));  // the caller drops it
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(submitted.load(), 100);
  for (auto& s : all) {
    CompletionChunk ch;
    for (;;) {
      auto r = s->poll(20000, &ch);
      ASSERT_NE(r, RequestStream::Poll::kTimeout);
      if (r == RequestStream::Poll::kEnd) break;
    }
  }
  wait_pool_full(*e);
}

}  // namespace
}  // namespace di::engine

namespace di::engine {
namespace {

using namespace testing::engine_util;

TEST(LLM, GenerateReturnsEveryPromptInOrderWithText) {
  EngineConfig c;
  c.max_model_len = 256;
  auto llm = LLM::from_model(std::make_unique<ToyModel>(), c, std::make_shared<ToyTokenText>());
  ASSERT_TRUE(llm.is_ok());
  auto prompts = mixed_prompts();
  auto out = (*llm)->generate(prompts, greedy(6));
  ASSERT_TRUE(out.is_ok());
  ASSERT_EQ(out->size(), prompts.size());
  ToyTokenText tt;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const CompletionOutput& o = (*out)[i].outputs[0];
    EXPECT_EQ(o.token_ids, testing::toy_reference_greedy(prompts[i], 6, false));
    EXPECT_TRUE(utf8_valid(o.text)) << i;
    // Non-special tokens' bytes, in order, decoded as the tokenizer decodes them (U+FFFD per
    // maximal ill-formed subpart).
    std::string bytes;
    for (int32_t t : o.token_ids)
      if (t != testing::kToyEos) bytes += tt.token_bytes(t);
    const std::string expect = utf8_lossy(bytes);
    EXPECT_EQ(o.text, expect) << i;
  }
  SamplingParams bad = greedy();
  bad.top_p = 2;
  auto err = (*llm)->generate(prompts, bad);
  ASSERT_FALSE(err.is_ok());
  EXPECT_NE(err.status().message().find("prompts[0]: top_p"), std::string::npos);
}

}  // namespace
}  // namespace di::engine
