// How completions end and what their chunks carry, end to end through LLMEngine on ToyModel:
// stop token ids, end-of-sequence, ignore_eos, min_tokens, max_tokens, and logprobs, each checked
// against the cache-free reference model (the rule applied to its logits, step by step).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/utf8.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

using testing::kToyEos;
using testing::kToyVocab;
using testing::toy_reference_greedy;
using testing::toy_reference_logits;
using testing::ToyTokenText;
using namespace testing::engine_util;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Greedy on the reference with `banned` tokens masked while fewer than min_tokens were made;
// stops after a stop id (once allowed) or max_tokens.
std::vector<int32_t> reference_with_bans(std::vector<int32_t> ctx, int max_tokens, int min_tokens,
                                         const std::vector<int32_t>& banned, const std::vector<int32_t>& stops) {
  std::vector<int32_t> out;
  while (static_cast<int>(out.size()) < max_tokens) {
    std::vector<float> row = toy_reference_logits(ctx);
    if (static_cast<int>(out.size()) < min_tokens)
      for (int32_t b : banned) row[b] = kNegInf;
    const auto tok = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    out.push_back(tok);
    ctx.push_back(tok);
    if (std::find(stops.begin(), stops.end(), tok) != stops.end()) break;
  }
  return out;
}

// The text a completion's tokens give: non-special bytes, decoded with U+FFFD substitution.
std::string text_of(const std::vector<int32_t>& tokens) {
  ToyTokenText tt;
  std::string bytes;
  for (int32_t t : tokens)
    if (t != kToyEos) bytes += tt.token_bytes(t);
  return utf8_lossy(bytes);
}

Completion run_one(LLMEngine& e, const std::vector<int32_t>& prompt, const SamplingParams& p) {
  return run_batch(e, {prompt}, [&](int) { return p; })[0];
}

TEST(EngineStop, StopTokenIdEndsTheCompletionAndMinTokensDefersIt) {
  auto e = make_engine();
  const auto prompt = prompt_of(9, 4);
  SamplingParams p = greedy(30);
  p.ignore_eos = true;
  const Completion full = run_one(*e, prompt, p);
  ASSERT_EQ(full.tokens, toy_reference_greedy(prompt, 30, true));
  // The stop id: a token the free run first makes at position k >= 3.
  size_t k = 3;
  while (k < full.tokens.size() &&
         (full.tokens[k] == kToyEos || std::count(full.tokens.begin(), full.tokens.begin() + k, full.tokens[k]) != 0))
    ++k;
  ASSERT_LT(k, full.tokens.size());
  const int32_t stop = full.tokens[k];

  p.stop_token_ids = {stop};
  const Completion stopped = run_one(*e, prompt, p);
  EXPECT_EQ(stopped.tokens, std::vector<int32_t>(full.tokens.begin(), full.tokens.begin() + k + 1));
  EXPECT_EQ(stopped.finish, FinishReason::kStop);
  // The stop id is the completion's last token id, but its text is not emitted.
  EXPECT_EQ(stopped.text, text_of(std::vector<int32_t>(full.tokens.begin(), full.tokens.begin() + k)));

  p.min_tokens = static_cast<int32_t>(k) + 2;
  const Completion deferred = run_one(*e, prompt, p);
  const auto expect = reference_with_bans(prompt, 30, p.min_tokens, {stop}, {stop});
  EXPECT_EQ(deferred.tokens, expect);
  EXPECT_GT(deferred.tokens.size(), k + 1);
  EXPECT_EQ(std::count(deferred.tokens.begin(), deferred.tokens.begin() + p.min_tokens, stop), 0);
  EXPECT_EQ(deferred.finish, expect.back() == stop ? FinishReason::kStop : FinishReason::kLength);
}

TEST(EngineStop, EosEndsTheCompletionUnlessIgnoredOrBeforeMinTokensAndMaxTokensCuts) {
  // A prompt whose greedy continuation reaches end-of-sequence after a few tokens.
  std::vector<int32_t> prompt, ref;
  for (int salt = 0; salt < 2000 && prompt.empty(); ++salt) {
    auto p = prompt_of(5 + salt % 20, salt);
    auto r = toy_reference_greedy(p, 40, false);
    if (r.back() == kToyEos && r.size() >= 3) {
      prompt = p;
      ref = r;
    }
  }
  ASSERT_FALSE(prompt.empty());
  const int j = static_cast<int>(ref.size()) - 1;  // the EOS position
  auto e = make_engine();

  const Completion ended = run_one(*e, prompt, greedy(40));
  EXPECT_EQ(ended.tokens, ref);
  EXPECT_EQ(ended.finish, FinishReason::kStop);
  EXPECT_EQ(ended.text, text_of(ref));
  EXPECT_EQ(ended.text.find("<eos>"), std::string::npos);

  SamplingParams ignore = greedy(40);
  ignore.ignore_eos = true;
  const Completion ignored = run_one(*e, prompt, ignore);
  EXPECT_EQ(ignored.tokens, toy_reference_greedy(prompt, 40, true));
  EXPECT_EQ(ignored.tokens.size(), 40u);
  EXPECT_EQ(ignored.finish, FinishReason::kLength);

  SamplingParams later = greedy(40);
  later.min_tokens = j + 3;
  const Completion deferred = run_one(*e, prompt, later);
  EXPECT_EQ(deferred.tokens, reference_with_bans(prompt, 40, later.min_tokens, {kToyEos}, {kToyEos}));
  EXPECT_EQ(std::count(deferred.tokens.begin(), deferred.tokens.begin() + later.min_tokens, kToyEos), 0);

  const Completion cut = run_one(*e, prompt, greedy(j));
  EXPECT_EQ(cut.tokens, std::vector<int32_t>(ref.begin(), ref.begin() + j));
  EXPECT_EQ(cut.finish, FinishReason::kLength);
}

// Every chunk's logprob is log-softmax of the reference logits at that completion's own context,
// and top_logprobs are the reference's best tokens, for each of n sampled completions.
TEST(EngineStop, LogprobsOfEveryCompletionAreTheReferenceLogSoftmax) {
  auto e = make_engine();
  const auto prompt = prompt_of(13, 8);
  SamplingParams p;
  p.n = 3;
  p.seed = 77;
  p.max_tokens = 12;
  p.ignore_eos = true;
  p.logprobs = true;
  p.top_logprobs = 4;
  auto stream = e->submit(prompt, p);
  ASSERT_TRUE(stream.is_ok()) << stream.status().message();
  std::vector<std::vector<int32_t>> tokens(3);
  std::vector<std::vector<float>> lps(3);
  std::vector<std::vector<std::vector<std::pair<int32_t, float>>>> tops(3);
  CompletionChunk c;
  while ((*stream)->poll(20000, &c) == RequestStream::Poll::kChunk) {
    ASSERT_EQ(c.logprobs.size(), c.token_ids.size());
    ASSERT_EQ(c.top_logprobs.size(), c.token_ids.size());
    auto& t = tokens[static_cast<size_t>(c.index)];
    t.insert(t.end(), c.token_ids.begin(), c.token_ids.end());
    auto& l = lps[static_cast<size_t>(c.index)];
    l.insert(l.end(), c.logprobs.begin(), c.logprobs.end());
    auto& tp = tops[static_cast<size_t>(c.index)];
    tp.insert(tp.end(), c.top_logprobs.begin(), c.top_logprobs.end());
  }
  int sampled_below_top = 0;
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(tokens[i].size(), 12u) << i;
    std::vector<int32_t> ctx = prompt;
    for (size_t k = 0; k < tokens[i].size(); ++k) {
      const std::vector<float> row = toy_reference_logits(ctx);
      const float mx = *std::max_element(row.begin(), row.end());
      double z = 0;
      for (float v : row) z += std::exp(static_cast<double>(v - mx));
      auto lsm = [&](int32_t t) { return static_cast<double>(row[t] - mx) - std::log(z); };
      EXPECT_NEAR(lps[i][k], lsm(tokens[i][k]), 1e-5) << i << " " << k;
      std::vector<int32_t> order(kToyVocab);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
      ASSERT_EQ(tops[i][k].size(), 4u);
      for (size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(tops[i][k][r].first, order[r]) << i << " " << k;
        EXPECT_NEAR(tops[i][k][r].second, lsm(order[r]), 1e-5);
      }
      sampled_below_top += tokens[i][k] != order[0];
      ctx.push_back(tokens[i][k]);
    }
  }
  EXPECT_GT(sampled_below_top, 0);  // temperature 1 really sampled
}

TEST(EngineStop, MaxTokensBeyondAnyLengthIsALimitErrorNotAnOverflow) {
  auto e = make_engine();
  SamplingParams p = greedy();
  p.max_tokens = std::numeric_limits<int64_t>::max();
  auto r = e->submit({1, 2, 3}, p);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimit);
  EXPECT_NE(r.status().message().find("max_model_len"), std::string::npos) << r.status().message();
  p.max_tokens = std::numeric_limits<int64_t>::max() - 1;
  EXPECT_FALSE(e->submit({1, 2, 3}, p).is_ok());
}

TEST(EngineStop, MaxNumSeqsBeyondTheLimitIsRefusedAtOnce) {
  EngineConfig c;
  c.max_model_len = 256;
  c.max_num_seqs = 1000000000;
  auto r = LLMEngine::create(std::make_unique<testing::ToyModel>(), c, nullptr);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("max_num_seqs: expected 1..65536"), std::string::npos) << r.status().message();
  c.max_num_seqs = 65536;
  c.kv_cache_bytes = 64 << 20;  // 131072 slots of 128 bytes, and blocks
  auto ok = LLMEngine::create(std::make_unique<testing::ToyModel>(), c, nullptr);
  EXPECT_TRUE(ok.is_ok()) << ok.status().message();
}

}  // namespace
}  // namespace di::engine
