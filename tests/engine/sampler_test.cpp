// Sampler: each processor's effect checked against the definition, keyed-RNG determinism, and
// sampled frequencies matching the softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>

#include "engine/sample/sampler.h"

namespace di::engine {
namespace {

constexpr int64_t V = 8;

Sequence seq_with(SamplingParams p, std::vector<int32_t> prompt = {1, 2}) {
  Sequence s;
  s.params = std::make_shared<const SamplingParams>(p);
  s.seed = p.seed.value_or(7);
  s.num_prompt_tokens = static_cast<int64_t>(prompt.size());
  s.token_ids = std::move(prompt);
  return s;
}

const std::vector<float> kLogits = {1.0f, 3.0f, 2.5f, 0.5f, -1.0f, 2.9f, 0.0f, 1.5f};

TEST(Sampler, GreedyPicksTheArgmaxAndLogprobIsLogSoftmax) {
  Sampler s(V, {0});
  SamplingParams p;
  p.temperature = 0;
  p.top_logprobs = 3;
  auto r = s.sample(kLogits, seq_with(p));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->token, 1);
  double z = 0;
  for (float x : kLogits) z += std::exp(x);
  EXPECT_NEAR(r->logprob, 3.0 - std::log(z), 1e-5);
  ASSERT_EQ(r->top_logprobs.size(), 3u);
  EXPECT_EQ(r->top_logprobs[0].first, 1);
  EXPECT_EQ(r->top_logprobs[1].first, 5);
  EXPECT_EQ(r->top_logprobs[2].first, 2);
}

TEST(Sampler, LogitBiasAndPenaltiesFollowTheirDefinitions) {
  Sampler s(V, {0});
  SamplingParams p;
  p.temperature = 0;
  p.logit_bias = {{4, 10.0f}};
  EXPECT_EQ(s.sample(kLogits, seq_with(p))->token, 4);
  // Repetition penalty 2 halves the positive logit of seen token 1 (3 -> 1.5): 5 (2.9) wins.
  SamplingParams r;
  r.temperature = 0;
  r.repetition_penalty = 2.0;
  EXPECT_EQ(s.sample(kLogits, seq_with(r, {1}))->token, 5);
  // Frequency penalty counts output occurrences only.
  SamplingParams f;
  f.temperature = 0;
  f.frequency_penalty = 0.3;
  Sequence q = seq_with(f, {3});
  q.append_token(1);
  q.append_token(1);  // 3 - 0.6 = 2.4 < 2.9
  EXPECT_EQ(s.sample(kLogits, q)->token, 5);
  SamplingParams pr;
  pr.temperature = 0;
  pr.presence_penalty = 0.2;  // 3 - 0.2 = 2.8 < 2.9
  Sequence q2 = seq_with(pr, {3});
  q2.append_token(1);
  EXPECT_EQ(s.sample(kLogits, q2)->token, 5);
}

TEST(Sampler, MinTokensMasksEosAndStopIds) {
  Sampler s(V, {1});
  SamplingParams p;
  p.temperature = 0;
  p.min_tokens = 2;
  p.stop_token_ids = {5};
  EXPECT_EQ(s.sample(kLogits, seq_with(p))->token, 2);
  Sequence done = seq_with(p);
  done.append_token(3);
  done.append_token(3);
  EXPECT_EQ(s.sample(kLogits, done)->token, 1);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  Sampler s(V, {0});
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SamplingParams k;
    k.top_k = 1;
    k.seed = seed;
    EXPECT_EQ(s.sample(kLogits, seq_with(k))->token, 1);
    SamplingParams tp;
    tp.top_p = 1e-6;
    tp.seed = seed;
    EXPECT_EQ(s.sample(kLogits, seq_with(tp))->token, 1);
  }
}

TEST(Sampler, TopPAndMinPKeepOnlyTheirSets) {
  Sampler s(V, {0});
  // Softmax order: 1 (3.0), 5 (2.9), 2 (2.5), 7 (1.5), 0, 3, 6, 4.
  std::map<int32_t, int> seen_p, seen_min;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    SamplingParams p;
    p.top_p = 0.5;  // p(1)+p(5) ~ 0.28+0.26 >= 0.5
    p.seed = seed;
    ++seen_p[s.sample(kLogits, seq_with(p))->token];
    SamplingParams m;
    m.min_p = 0.5;  // keeps tokens with p >= 0.5 p(1): 1, 5, 2 (e^-0.5 = 0.61)
    m.seed = seed;
    ++seen_min[s.sample(kLogits, seq_with(m))->token];
  }
  EXPECT_EQ(seen_p.size(), 2u);
  EXPECT_TRUE(seen_p.count(1) && seen_p.count(5));
  EXPECT_EQ(seen_min.size(), 3u);
  EXPECT_TRUE(seen_min.count(1) && seen_min.count(5) && seen_min.count(2));
}

TEST(Sampler, SeededDrawDependsOnlyOnSeedIndexAndPosition) {
  Sampler s(V, {0});
  SamplingParams p;
  p.seed = 42;
  auto a = s.sample(kLogits, seq_with(p))->token;
  EXPECT_EQ(s.sample(kLogits, seq_with(p))->token, a);
  int differs = 0;
  for (int32_t i = 1; i < 30; ++i) {
    Sequence q = seq_with(p);
    q.index = i;
    differs += s.sample(kLogits, q)->token != a;
  }
  EXPECT_GT(differs, 0);
}

TEST(Sampler, SampledFrequenciesMatchTheTemperatureSoftmax) {
  Sampler s(V, {0});
  const double t = 0.7;
  std::vector<double> expect(V);
  double z = 0;
  for (int64_t v = 0; v < V; ++v) z += expect[v] = std::exp(kLogits[v] / t);
  std::vector<int> count(V);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    SamplingParams p;
    p.temperature = t;
    p.seed = static_cast<uint64_t>(i);
    ++count[s.sample(kLogits, seq_with(p))->token];
  }
  for (int64_t v = 0; v < V; ++v) EXPECT_NEAR(count[v] / double(n), expect[v] / z, 0.015) << v;
}

class OnlyEven final : public TokenConstraint {
 public:
  void fill_mask(uint32_t* mask, int64_t words) override {
    for (int64_t w = 0; w < words; ++w) mask[w] = 0x55555555u;
  }
  bool accept_token(int32_t t) override { return t % 2 == 0; }
  void rollback(int32_t) override {}
  bool is_terminated() const override { return false; }
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<OnlyEven>(); }
};

TEST(Sampler, ConstraintMaskExcludesDisallowedTokens) {
  Sampler s(V, {0});
  SamplingParams p;
  p.temperature = 0;
  Sequence q = seq_with(p);
  q.constraint = std::make_unique<OnlyEven>();
  EXPECT_EQ(s.sample(kLogits, q)->token, 2);
}

TEST(SamplingParams, BadValuesNameTheField) {
  struct Case { SamplingParams p; const char* field; };
  std::vector<Case> cases(8);
  cases[0].p.temperature = -1; cases[0].field = "temperature";
  cases[1].p.temperature = std::nan(""); cases[1].field = "temperature";
  cases[2].p.top_p = 0; cases[2].field = "top_p";
  cases[3].p.top_p = 1.5; cases[3].field = "top_p";
  cases[4].p.max_tokens = 0; cases[4].field = "max_tokens";
  cases[5].p.stop_token_ids = {V}; cases[5].field = "stop_token_ids[0]";
  cases[6].p.logit_bias = {{1, 200.0f}}; cases[6].field = "logit_bias[1]";
  cases[7].p.top_logprobs = 21; cases[7].field = "top_logprobs";
  for (const Case& c : cases) {
    Status st = c.p.validate(V);
    ASSERT_FALSE(st.is_ok()) << c.field;
    EXPECT_EQ(st.message().rfind(c.field, 0), 0u) << st.message();
  }
  EXPECT_TRUE(SamplingParams{}.validate(V).is_ok());
}

}  // namespace
}  // namespace di::engine
