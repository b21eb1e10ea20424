// Engine runs for the speculative-decoding tests of every family and backend: load a model with
// a draft length, generate, keep the outputs and the engine's metrics; compare two runs token for
// token. Header-only, for the test binaries.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/llm.h"

namespace di::test {

struct SpecRun {
  std::vector<engine::RequestOutput> outputs;
  nlohmann::json metrics;
};

// max_num_seqs 4, the given length limits, `drafts` draft tokens (0: none), variable length or not.
inline engine::EngineConfig spec_config(int32_t drafts, int32_t variable, int64_t max_model_len,
                                        int32_t max_num_batched_tokens) {
  engine::EngineConfig c;
  c.max_model_len = max_model_len;
  c.max_num_seqs = 4;
  c.max_num_batched_tokens = max_num_batched_tokens;
  c.num_speculative_tokens = drafts;
  c.speculative_variable = variable;
  return c;
}

// Greedy, EOS ignored, so every run makes exactly max_tokens tokens.
inline engine::SamplingParams spec_greedy(int64_t max_tokens) {
  engine::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

// `repeats` rounds of the same prompts on one engine (later rounds hit the prefix cache); the
// last round's outputs. The model must run on opts.device when that names one.
inline SpecRun spec_generate(const std::string& dir, const engine::EngineConfig& config,
                             const engine::ModelOptions& opts, const std::vector<std::vector<int32_t>>& prompts,
                             const engine::SamplingParams& params, int repeats = 1) {
  auto llm = engine::LLM::load(dir, config, opts);
  EXPECT_TRUE(llm.is_ok()) << llm.status().message();
  if (!llm.is_ok()) return {};
  if (opts.device != "auto" && !opts.device.empty()) EXPECT_EQ((*llm)->engine().info().model.device, opts.device);
  SpecRun run;
  for (int r = 0; r < repeats; ++r) {
    auto out = (*llm)->generate(prompts, params);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    if (!out.is_ok()) return {};
    run.outputs = std::move(out).value();
  }
  run.metrics = nlohmann::json::parse((*llm)->engine().metrics_json());
  return run;
}

inline void expect_same_tokens(const SpecRun& want, const SpecRun& got, const std::string& label,
                               int64_t new_tokens) {
  ASSERT_EQ(want.outputs.size(), got.outputs.size()) << label;
  for (size_t i = 0; i < want.outputs.size(); ++i) {
    EXPECT_EQ(got.outputs[i].outputs[0].token_ids, want.outputs[i].outputs[0].token_ids)
        << label << ": prompt " << i << " error " << got.outputs[i].outputs[0].error;
    EXPECT_EQ(static_cast<int64_t>(got.outputs[i].outputs[0].token_ids.size()), new_tokens) << label;
  }
}

// The largest |logprob difference| of two runs of the same prompts, over each token's logprob and
// its top logprobs, whose counts and token ids must be the same.
inline double worst_logprob_difference(const SpecRun& want, const SpecRun& got) {
  double worst = 0;
  EXPECT_EQ(want.outputs.size(), got.outputs.size());
  for (size_t i = 0; i < std::min(want.outputs.size(), got.outputs.size()); ++i) {
    const engine::CompletionOutput& a = want.outputs[i].outputs[0];
    const engine::CompletionOutput& b = got.outputs[i].outputs[0];
    EXPECT_EQ(a.top_logprobs.size(), b.top_logprobs.size()) << "prompt " << i;
    EXPECT_EQ(a.logprobs.size(), b.logprobs.size()) << "prompt " << i;
    for (size_t t = 0; t < std::min(a.logprobs.size(), b.logprobs.size()); ++t)
      worst = std::max(worst, std::abs(static_cast<double>(a.logprobs[t] - b.logprobs[t])));
    for (size_t t = 0; t < std::min(a.top_logprobs.size(), b.top_logprobs.size()); ++t) {
      const auto &x = a.top_logprobs[t], &y = b.top_logprobs[t];
      EXPECT_EQ(x.size(), y.size()) << "prompt " << i << " step " << t;
      for (size_t j = 0; j < std::min(x.size(), y.size()); ++j) {
        EXPECT_EQ(x[j].first, y[j].first) << "prompt " << i << " step " << t;
        worst = std::max(worst, std::abs(static_cast<double>(x[j].second - y[j].second)));
      }
    }
  }
  return worst;
}

inline double acceptance(const SpecRun& r) { return r.metrics.value("spec_acceptance_rate", 0.0); }

// The per-position draft metrics agree with the totals: every verify has a first draft token,
// the positions add up to the drafted and accepted counts, a later position is reached and kept
// no more often than an earlier one (drafts are kept as a prefix), no draft is longer than
// `max_draft`, and the mean accepted length is 1 + accepted per verify.
inline void expect_consistent_draft_metrics(const SpecRun& r, int32_t max_draft, const std::string& label) {
  const nlohmann::json& m = r.metrics;
  const auto& by = m.at("spec_acceptance_by_position");
  const int64_t verifies = m.value("spec_verifies", int64_t{0});
  ASSERT_GT(verifies, 0) << label;
  ASSERT_LE(by.size(), static_cast<size_t>(max_draft)) << label;
  ASSERT_FALSE(by.empty()) << label;
  EXPECT_EQ(by[0]["drafted"].get<int64_t>(), verifies) << label;
  int64_t drafted = 0, accepted = 0;
  for (size_t i = 0; i < by.size(); ++i) {
    const int64_t d = by[i]["drafted"].get<int64_t>(), a = by[i]["accepted"].get<int64_t>();
    EXPECT_EQ(by[i]["position"].get<int64_t>(), static_cast<int64_t>(i + 1)) << label;
    EXPECT_LE(a, d) << label << " position " << i + 1;
    if (i > 0) {
      EXPECT_LE(d, by[i - 1]["drafted"].get<int64_t>()) << label << " position " << i + 1;
      EXPECT_LE(a, by[i - 1]["accepted"].get<int64_t>()) << label << " position " << i + 1;
    }
    drafted += d;
    accepted += a;
  }
  EXPECT_EQ(drafted, m.value("spec_draft_tokens", int64_t{0})) << label;
  EXPECT_EQ(accepted, m.value("spec_accepted_tokens", int64_t{0})) << label;
  EXPECT_NEAR(m.value("spec_mean_accepted_length", 0.0), 1.0 + double(accepted) / double(verifies), 1e-12) << label;
  const int64_t steps = m.value("spec_verify_steps", int64_t{0});
  EXPECT_GT(steps, 0) << label;
  EXPECT_LE(steps, verifies) << label;
  EXPECT_LE(steps, m.value("steps", int64_t{0})) << label;
}

}  // namespace di::test
