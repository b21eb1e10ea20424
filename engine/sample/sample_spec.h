// SampleSpec: one draw, as plain data — which logits row, the knobs, the RNG key and the sparse
// logit edits (bias, min_tokens suppression, penalties) already resolved against the sequence.
// The CPU sampler and the device sampler both consume it, so they process logits identically;
// building it is O(edits), never O(vocab).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sequence.h"

namespace di::engine {

// One change to a logit; kinds are applied in this order, each to distinct tokens.
enum class LogitEditKind : int32_t {
  kAdd = 0,       // logit_bias: x += value
  kExclude = 1,   // min_tokens: EOS / stop ids to -inf
  kRepeat = 2,    // repetition penalty over prompt and output tokens: x > 0 ? x / r : x * r
  kSubtract = 3,  // presence + frequency penalty: x -= value
};

struct LogitEdit {
  int32_t token = 0;
  float value = 0;  // kAdd: the bias; kRepeat: the penalty r; kSubtract: the penalty; kExclude: unused
};

struct SampleSpec {
  int32_t row = 0;  // logits row the draw reads
  double temperature = 1.0;
  double top_p = 1.0;
  int32_t top_k = 0;  // 0: off
  double min_p = 0.0;
  uint64_t seed = 0, index = 0, position = 0;  // the RNG key
  bool logprobs = false;      // the chosen token's logprob is wanted
  int32_t top_logprobs = 0;   // 0..kMaxTopLogprobs
  std::vector<LogitEdit> edits[4];  // by LogitEditKind

  bool greedy() const;
};

// The draw for `seq`'s next token from logits row `row`. Duplicate bias entries are summed in the
// order given (as applying them one by one would).
SampleSpec make_sample_spec(const Sequence& seq, int32_t row, const std::vector<int32_t>& eos_token_ids,
                            int64_t vocab_size);

}  // namespace di::engine
