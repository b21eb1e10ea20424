// Sampler: turns one sequence's logits row into its next token — constraint mask, logit bias,
// min_tokens, penalties, logprobs, then greedy or temperature / top-k / top-p / min-p sampling
// with the keyed RNG. Stateless; reads the Sequence, never changes it.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/sequence.h"

namespace di::engine {

struct SampledToken {
  int32_t token = -1;
  float logprob = 0;  // of the processed distribution (after bias and penalties, before temperature)
  std::vector<std::pair<int32_t, float>> top_logprobs;  // most likely first
};

class Sampler {
 public:
  Sampler(int64_t vocab_size, std::vector<int32_t> eos_token_ids)
      : vocab_size_(vocab_size), eos_token_ids_(std::move(eos_token_ids)) {}

  // Samples `seq`'s next token from `logits` (vocab_size floats, left unchanged). `masked`: the
  // logits already carry seq's constraint mask (applied on the device), so it is not rebuilt.
  Result<SampledToken> sample(std::span<const float> logits, const Sequence& seq, bool masked = false);

  int64_t vocab_size() const { return vocab_size_; }
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

 private:
  void apply_processors(std::vector<float>& x, const Sequence& seq, bool masked);

  int64_t vocab_size_;
  std::vector<int32_t> eos_token_ids_;
  std::vector<float> work_;
  std::vector<uint32_t> mask_;
  std::vector<int32_t> order_;
};

}  // namespace di::engine
