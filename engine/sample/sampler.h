// Sampler: turns one sequence's logits row into its next token — constraint mask, then the
// SampleSpec's edits (logit bias, min_tokens, penalties), logprobs, then greedy or temperature /
// top-k / top-p / min-p sampling with the keyed RNG (kernels/sampling_math.h says how). The
// device sampler does the same from the same SampleSpec. Stateless; reads the Sequence, never
// changes it.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/sample/sample_spec.h"
#include "engine/sequence.h"

namespace di::engine {

struct SampledToken {
  int32_t token = -1;
  float logprob = 0;  // of the processed distribution (after bias and penalties, before temperature)
  std::vector<std::pair<int32_t, float>> top_logprobs;  // most likely first
};

// The draw `spec` describes, from `logits` (one vocab-sized row, constraint mask already
// applied). `work` is scratch. Errors: every token excluded, or a NaN logit.
Result<SampledToken> sample_logits(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& work);

// The distribution the draw `spec` describes samples from (kept weights over their sum; greedy: all
// mass on the token it picks), as `probs` (vocab-sized). Speculative decoding's rejection test
// needs it; drawing from it by inverse CDF in id order is the draw itself. Errors as sample_logits.
Status draw_distribution(std::span<const float> logits, const SampleSpec& spec, std::vector<float>& work,
                         std::vector<double>& probs);
// `token` described as sample_logits would have described it had it drawn it (logprobs).
Result<SampledToken> describe_token(std::span<const float> logits, const SampleSpec& spec, int32_t token,
                                    std::vector<float>& work);

class Sampler {
 public:
  Sampler(int64_t vocab_size, std::vector<int32_t> eos_token_ids)
      : vocab_size_(vocab_size), eos_token_ids_(std::move(eos_token_ids)) {}

  // Samples `seq`'s next token from `logits` (vocab_size floats, left unchanged). `masked`: the
  // logits already carry seq's constraint mask (applied on the device), so it is not rebuilt.
  Result<SampledToken> sample(std::span<const float> logits, const Sequence& seq, bool masked = false);

  // The same with `token` given (speculative decoding chose it): its logprobs.
  Result<SampledToken> describe(std::span<const float> logits, const Sequence& seq, int32_t token);
  // The distribution sample() draws `seq`'s next token from (see draw_distribution).
  Status distribution(std::span<const float> logits, const Sequence& seq, std::vector<double>& probs);
  // `logits` with seq's constraint mask applied (the row itself when it has none).
  std::span<const float> masked_row(std::span<const float> logits, const Sequence& seq);

  int64_t vocab_size() const { return vocab_size_; }
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

 private:
  int64_t vocab_size_;
  std::vector<int32_t> eos_token_ids_;
  std::vector<float> masked_, work_;
  std::vector<uint32_t> mask_;
};

}  // namespace di::engine
