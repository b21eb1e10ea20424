// SamplingParams: what one request asks of the sampler and of the stop logic. Plain data, part of
// the typed request the recipe fills and the engine consumes (engine_request.h); the sampler and
// the output processor read it, nothing writes it after submission. Its validation is the
// engine's (engine/sample/sampling_params.cpp), which knows the vocabulary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace di::request {

struct SamplingParams {
  int32_t n = 1;                     // completions of the prompt
  double temperature = 1.0;          // 0: greedy
  double top_p = 1.0;                // (0, 1]
  int32_t top_k = 0;                 // 0 or -1: all tokens
  double min_p = 0.0;                // [0, 1]
  double repetition_penalty = 1.0;   // > 0; 1 = off; over prompt and output tokens
  double presence_penalty = 0.0;     // [-2, 2]; over output tokens
  double frequency_penalty = 0.0;    // [-2, 2]; over output tokens
  std::vector<std::pair<int32_t, float>> logit_bias;  // token id, bias in [-100, 100]
  int32_t min_tokens = 0;            // EOS and stop token ids are masked before this many
  int64_t max_tokens = -1;           // -1: until max_model_len
  bool ignore_eos = false;
  std::vector<int32_t> stop_token_ids;
  std::vector<std::string> stop;     // stop strings, removed from the text
  std::optional<uint64_t> seed;      // unset: the engine draws one at submission
  bool logprobs = false;
  int32_t top_logprobs = 0;          // 0..20
  bool skip_special_tokens = true;

  // Checks every field; the message names the field and the value that came.
  Status validate(int64_t vocab_size) const;
};

}  // namespace di::request
