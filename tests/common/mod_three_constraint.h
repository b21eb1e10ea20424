// ModThree, a token constraint whose mask depends on every token it accepted, and a greedy run of
// one prompt under it: what the speculative-decoding tests of every backend use to see that drafts
// are masked with the right state and rolled back by the right count. Header-only, for the tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/llm.h"
#include "engine/sample/token_constraint.h"

namespace di::test {

// Forbids, at each position, every token t with (t + state) % 3 == 0, where state is the sum of
// the tokens it accepted: a draft that was masked, accepted and rolled back with the wrong count,
// or masked with the wrong state, shows up at once.
class ModThree final : public engine::TokenConstraint {
 public:
  void fill_mask(uint32_t* bitmask, int64_t num_words) override {
    for (int64_t w = 0; w < num_words; ++w) bitmask[w] = 0;
    for (int64_t t = 0; t < num_words * 32; ++t)
      if (allowed(static_cast<int32_t>(t))) bitmask[t / 32] |= 1u << (t % 32);
  }
  bool accept_token(int32_t token) override {
    if (!allowed(token)) return false;
    history_.push_back(token);
    return true;
  }
  void rollback(int32_t n) override {
    EXPECT_LE(static_cast<size_t>(n), history_.size()) << "rolled back past the first token";
    history_.resize(history_.size() - std::min<size_t>(n, history_.size()));
  }
  bool is_terminated() const override { return false; }
  std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<ModThree>(*this); }

 private:
  bool allowed(int32_t t) const {
    int64_t state = 0;
    for (int32_t h : history_) state += h;
    return (t + state) % 3 != 0;
  }
  std::vector<int32_t> history_;
};

// `prompt` under ModThree with `params` on a fresh engine; the tokens it made, and the engine's
// metrics in *metrics.
inline std::vector<int32_t> mod_three_generate(const std::string& dir, const engine::EngineConfig& config,
                                               const engine::ModelOptions& opts, const std::vector<int32_t>& prompt,
                                               const engine::SamplingParams& params, nlohmann::json* metrics) {
  auto llm = engine::LLM::load(dir, config, opts);
  EXPECT_TRUE(llm.is_ok()) << llm.status().message();
  if (!llm.is_ok()) return {};
  auto stream = (*llm)->engine().submit(prompt, params, {}, std::make_unique<ModThree>());
  EXPECT_TRUE(stream.is_ok()) << stream.status().message();
  if (!stream.is_ok()) return {};
  std::vector<int32_t> tokens;
  engine::CompletionChunk chunk;
  while ((*stream)->poll(-1, &chunk) == engine::RequestStream::Poll::kChunk) {
    tokens.insert(tokens.end(), chunk.token_ids.begin(), chunk.token_ids.end());
    EXPECT_TRUE(chunk.error.empty()) << chunk.error;
  }
  *metrics = nlohmann::json::parse((*llm)->engine().metrics_json());
  return tokens;
}

}  // namespace di::test
