// ToyModel: a TEST DOUBLE of engine/model's Model, used only by tests/engine until (and besides)
// the real DeepSeek-V4 fixtures. It keeps every kind of cache group V4 has (full, sliding ring,
// compressed at rate 4, a per-sequence state slot) and makes its logits a hash of everything it
// reads back from them, checking each entry's stored position — so any cache bug (a wrong block,
// a bad prefix hit, a lost ring or state on preemption or fork) changes the tokens. toy_reference
// computes the same logits from the token list alone, without any cache.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "engine/output/token_text.h"

namespace di::engine::testing {

constexpr int64_t kToyVocab = 97;
constexpr int32_t kToyEos = 0;
constexpr int32_t kToyWindow = 5;
constexpr int32_t kToyRate = 4;

class ToyModel final : public Model {
 public:
  // `delay_ms`: each forward sleeps this long, so tests can act while a request is mid-flight.
  explicit ToyModel(int64_t max_position_embeddings = 4096, int delay_ms = 0);
  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;
  // Forward calls so far; read from test threads while the engine's step thread runs.
  int64_t forwards() const { return forwards_.load(); }

 private:
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  std::atomic<int64_t> forwards_{0};
  int delay_ms_ = 0;
};

// The logits ToyModel gives after `tokens` (the last token's row), from the tokens alone.
std::vector<float> toy_reference_logits(const std::vector<int32_t>& tokens);
// Greedy continuation of `prompt` by the reference: stops after max_tokens or at EOS.
std::vector<int32_t> toy_reference_greedy(std::vector<int32_t> prompt, int max_tokens, bool ignore_eos);

// Text for ToyModel's ids: 0 is "<eos>" (special); some ids are halves of a 2-byte or 3-byte
// UTF-8 character so streamed text must join them; the rest are short ASCII words.
class ToyTokenText final : public TokenText {
 public:
  ToyTokenText();
  int64_t vocab_size() const override { return kToyVocab; }
  std::string_view token_bytes(int32_t id) const override;
  bool is_special(int32_t id) const override { return id == kToyEos; }

 private:
  std::vector<std::string> text_;
};

}  // namespace di::engine::testing
