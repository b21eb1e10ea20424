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

}  // namespace di::test
