// Speculative decoding with the demo model's trained MTP layer through the engine: greedy output
// with drafts equals greedy output without them token for token (fixed and variable draft
// length, a batch of mixed prompt lengths, prefix caching, preemption under a small KV budget),
// the logprobs of every later step equal a run that never drafted (so a rejected draft leaves
// no trace in the cache), drafts under a constraint, sampled requests reproducible by seed,
// and a clear error for a model without MTP layers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kv/cache_layout.h"
#include "engine/llm.h"
#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/common/mod_three_constraint.h"
#include "tests/common/model_fixture.h"
#include "tests/common/spec_run.h"
#include "tests/common/v4_demo_mtp.h"

namespace di::test {
namespace {

namespace fs = std::filesystem;
using namespace v4_demo;

#define SKIP_WITHOUT_DEMO_MODEL()                                                                      \
  do {                                                                                                 \
    if (!fs::exists(kDemoDir + "/model.safetensors")) GTEST_SKIP() << "models/deepseek-v4-demo absent"; \
  } while (0)

using GenRun = SpecRun;

GenRun generate(const engine::EngineConfig& config, const std::vector<std::vector<int32_t>>& prompts,
                const engine::SamplingParams& params, int repeats = 1) {
  engine::ModelOptions opts;
  opts.num_threads = 2;
  return spec_generate(kDemoDir, config, opts, prompts, params, repeats);
}

TEST(V4Mtp, GreedyWithDraftsEqualsWithoutForFixedAndVariableLength) {
  SKIP_WITHOUT_DEMO_MODEL();
  const auto prompts = demo_prompts();
  const GenRun off = generate(base_config(0, 0), prompts, greedy_params());
  for (int32_t k : {1, 3}) {
    const GenRun fixed = generate(base_config(k, 0), prompts, greedy_params());
    expect_same_tokens(off, fixed, "fixed k=" + std::to_string(k));
    // The trained MTP layer agrees with the model most of the time (0.65-0.77 teacher-forced).
    EXPECT_GT(acceptance(fixed), 0.3) << "k=" << k;
    EXPECT_GT(fixed.metrics.value("spec_draft_tokens", 0), 0) << "k=" << k;
    expect_consistent_draft_metrics(fixed, k, "fixed k=" + std::to_string(k));
    std::printf("fixed k=%d: acceptance %.3f over %lld drafts, %lld steps (off: %lld)\n", k, acceptance(fixed),
                static_cast<long long>(fixed.metrics.value("spec_draft_tokens", 0)),
                static_cast<long long>(fixed.metrics.value("steps", 0)),
                static_cast<long long>(off.metrics.value("steps", 0)));
    EXPECT_LT(fixed.metrics.value("steps", 0), off.metrics.value("steps", 0));
  }
  const GenRun variable = generate(base_config(5, 1), prompts, greedy_params());
  expect_same_tokens(off, variable, "variable");
  expect_consistent_draft_metrics(variable, 5, "variable");
  std::printf("variable: acceptance %.3f over %lld drafts\n", acceptance(variable),
              static_cast<long long>(variable.metrics.value("spec_draft_tokens", 0)));
}

TEST(V4Mtp, GreedyWithDraftsEqualsWithoutFromThePrefixCache) {
  SKIP_WITHOUT_DEMO_MODEL();
  const auto prompts = demo_prompts();
  engine::EngineConfig off_config = base_config(0, 0), on_config = base_config(3, 0);
  const GenRun off = generate(off_config, prompts, greedy_params());
  // The second round hits the prefix cache the first one filled (checkpointed rings included).
  const GenRun on = generate(on_config, prompts, greedy_params(), 2);
  expect_same_tokens(off, on, "prefix cache");
  EXPECT_GT(on.metrics.value("prefix_cache_hits", 0), 0);
}

TEST(V4Mtp, GreedyWithDraftsEqualsWithoutUnderPreemption) {
  SKIP_WITHOUT_DEMO_MODEL();
  const auto prompts = demo_prompts();
  const GenRun off = generate(base_config(0, 0), prompts, greedy_params());
  engine::EngineConfig c = base_config(4, 0);
  engine::ModelOptions opts;
  auto probe = engine::load_model(kDemoDir, opts);
  ASSERT_TRUE(probe.is_ok()) << probe.status().message();
  auto layout = engine::make_cache_layout((*probe)->cache_groups(), c.block_size);
  ASSERT_TRUE(layout.is_ok());
  // Room for the longest sequence and two blocks: the others are preempted and recomputed.
  c.max_model_len = 256;
  c.kv_cache_bytes = layout->slot_bytes * c.max_num_seqs * 2 + layout->block_bytes * (layout->blocks_needed(256) + 2);
  const GenRun on = generate(c, prompts, greedy_params());
  expect_same_tokens(off, on, "preemption");
  EXPECT_GT(on.metrics.value("num_preemptions", 0), 0) << "the budget was meant to force preemption";
  EXPECT_GT(on.metrics.value("spec_draft_tokens", 0), 0);
}

// Each later step's distribution (its top logprobs) equals the one of a run that never drafted:
// rejected drafts were fed through every layer and wrote rings, compressor state, compressed
// entries and indexer keys, so any entry left behind would move the logits.
TEST(V4Mtp, RejectedDraftsLeaveTheCacheAsANonDraftingRun) {
  SKIP_WITHOUT_DEMO_MODEL();
  const auto prompts = demo_prompts();
  engine::SamplingParams p = greedy_params();
  p.logprobs = true;
  p.top_logprobs = 5;
  const GenRun off = generate(base_config(0, 0), prompts, p);
  const GenRun on = generate(base_config(5, 0), prompts, p);
  expect_same_tokens(off, on, "logprobs");
  ASSERT_GT(on.metrics.value("spec_draft_tokens", 0), on.metrics.value("spec_accepted_tokens", 0))
      << "no draft was rejected: nothing was rolled back";
  const double worst = worst_logprob_difference(off, on);
  std::printf("worst |logprob difference| with drafts: %.3g\n", worst);
  // fp32 computed over a different number of rows at once: rounding only.
  EXPECT_LT(worst, 1e-3);
}

std::vector<int32_t> constrained_greedy(const engine::EngineConfig& config, const std::vector<int32_t>& prompt,
                                        nlohmann::json* metrics) {
  engine::ModelOptions opts;
  opts.num_threads = 2;
  return mod_three_generate(kDemoDir, config, opts, prompt, greedy_params(), metrics);
}

TEST(V4Mtp, ConstrainedDraftsAreMaskedAndRolledBack) {
  SKIP_WITHOUT_DEMO_MODEL();
  const std::vector<int32_t> prompt = load_fixture({"v4_demo", "demo_chat"}).prompt;
  nlohmann::json m_off, m_on;
  const std::vector<int32_t> off = constrained_greedy(base_config(0, 0), prompt, &m_off);
  const std::vector<int32_t> on = constrained_greedy(base_config(4, 0), prompt, &m_on);
  EXPECT_EQ(static_cast<int64_t>(off.size()), kNewTokens);
  EXPECT_EQ(on, off);
  EXPECT_GT(m_on.value("spec_accepted_tokens", 0), 0) << "no constrained draft was accepted";
}

TEST(V4Mtp, SampledWithDraftsIsReproducibleBySeed) {
  SKIP_WITHOUT_DEMO_MODEL();
  const auto prompts = demo_prompts();
  engine::SamplingParams p = greedy_params();
  p.temperature = 0.8;
  p.top_p = 0.95;
  p.seed = 1234;
  const GenRun a = generate(base_config(3, 0), prompts, p);
  const GenRun b = generate(base_config(3, 0), prompts, p);
  expect_same_tokens(a, b, "same seed");
  EXPECT_GT(a.metrics.value("spec_accepted_tokens", 0), 0);
}

// The whole sampled path (the sampler's distribution with temperature and top-p, drafts drawn
// from the MTP head's, the rejection rule, the bonus draw) keeps what a request samples from: the
// second and third tokens' frequencies over 1,200 seeds with drafts against 1,200 without, by a
// two-sample chi-square at p = 0.001. The step budget holds every draft in full, so draft lengths
// and hence the counts do not depend on timing.
TEST(V4Mtp, SampledWithDraftsKeepsTheDistribution) {
  SKIP_WITHOUT_DEMO_MODEL();
  const std::vector<int32_t> prompt = load_fixture({"v4_demo", "demo_wordnet"}).prompt;  // 5 tokens
  constexpr int kSeeds = 1200;
  std::vector<std::vector<int32_t>> prompts(kSeeds, prompt);
  std::vector<engine::SamplingParams> params(kSeeds);
  for (int i = 0; i < kSeeds; ++i) {
    params[i].temperature = 0.9;
    params[i].top_p = 0.95;
    params[i].max_tokens = 3;
    params[i].ignore_eos = true;
    params[i].seed = 1000 + i;
  }
  using Counts = std::map<int32_t, int64_t>;
  auto counts = [&](int32_t drafts, std::vector<Counts>& n, nlohmann::json* metrics) {
    engine::EngineConfig c = base_config(drafts, 0);
    c.max_num_seqs = 64;
    c.max_num_batched_tokens = 1024;  // 64 decodes with 3 drafts each and room to spare
    engine::ModelOptions opts;
    opts.num_threads = 2;
    n.assign(3, {});
    auto llm = engine::LLM::load(kDemoDir, c, opts);
    EXPECT_TRUE(llm.is_ok()) << llm.status().message();
    if (!llm.is_ok()) return;
    auto out = (*llm)->generate(prompts, params);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    if (!out.is_ok()) return;
    for (const auto& r : *out)
      if (r.outputs[0].token_ids.size() == 3)
        for (int pos = 0; pos < 3; ++pos) ++n[pos][r.outputs[0].token_ids[pos]];
    *metrics = nlohmann::json::parse((*llm)->engine().metrics_json());
  };
  nlohmann::json m_off, m_on;
  std::vector<Counts> all_off, all_on;
  counts(0, all_off, &m_off);
  counts(3, all_on, &m_on);
  ASSERT_EQ(all_off.size(), 3u);
  ASSERT_EQ(all_on.size(), 3u);
  EXPECT_GT(m_on.value("spec_draft_tokens", 0), 0);
  for (int position : {1, 2}) {
    const Counts& off = all_off[position];
    const Counts& on = all_on[position];
    // Bins of tokens seen at least 10 times in both runs together; the rest in one bin.
    double chi2 = 0;
    int bins = 0;
    int64_t rest_a = 0, rest_b = 0;
    std::map<int32_t, std::pair<int64_t, int64_t>> both;
    for (const auto& [t, k] : off) both[t].first = k;
    for (const auto& [t, k] : on) both[t].second = k;
    auto add = [&](int64_t a, int64_t b) {
      chi2 += static_cast<double>((a - b) * (a - b)) / static_cast<double>(a + b);
      ++bins;
    };
    for (const auto& [t, ab] : both) {
      if (ab.first + ab.second >= 10) add(ab.first, ab.second);
      else rest_a += ab.first, rest_b += ab.second;
    }
    if (rest_a + rest_b > 0) add(rest_a, rest_b);
    const double df = bins - 1, z = 3.09;  // Wilson-Hilferty, p = 0.001
    const double bound = df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
    std::printf("token %d: chi2 %.1f over %d bins (bound %.1f), acceptance %.3f\n", position + 1, chi2, bins, bound,
                m_on.value("spec_acceptance_rate", 0.0));
    EXPECT_GE(bins, 3) << "the distribution is too peaked to test anything";
    EXPECT_LT(chi2, bound) << "token " << position + 1 << " is not distributed as without drafts";
  }
}

TEST(V4Mtp, DraftsOnAModelWithoutMtpLayersFailClearly) {
  // A random deepseek_v4 fixture whose config has no MTP layers.
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/model_v4/hca_csa_hc3_clip";
  engine::EngineConfig c = base_config(2, 1);
  c.max_model_len = 64;
  auto llm = engine::LLM::load(dir, c, {});
  ASSERT_FALSE(llm.is_ok());
  EXPECT_EQ(llm.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(llm.status().message().find("MTP"), std::string::npos) << llm.status().message();
  std::printf("%s\n", llm.status().message().c_str());
}

TEST(V4Mtp, DraftsAreRefusedOutsideTheirRange) {
  engine::EngineConfig c = base_config(100, 1);
  auto llm = engine::LLM::load(kDemoDir, c, {});
  ASSERT_FALSE(llm.is_ok());
  EXPECT_EQ(llm.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(llm.status().message().find("num_speculative_tokens"), std::string::npos) << llm.status().message();
}

}  // namespace
}  // namespace di::test
