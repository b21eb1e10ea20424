// The scalar fields of SamplingParams, one row each: the only place that names them. The struct
// (sampling_params.h), its table (sampling_fields()), the C ABI's option keys and schema
// (capi/src/option_keys.cpp), the di_options reader and writer (capi/src/engine_options.cpp),
// SamplingParams::validate and the recipe's reading of the APIs' bodies (recipe/protocol/
// sampling_fields.cpp) and its SamplingOptions are generated from these rows. The list-valued
// fields (logit_bias, stop, stop_token_ids) and seed have their own shapes and are read where they
// are used.
//
// X(type, name, default, api, doc, min, max, min_open, max_open, expected):
//   name      the same in di_options, in the APIs' JSON bodies and in the struct
//   api       true: every API's body may carry the field under this name and range (vLLM's extra
//             sampling parameters); false: the protocols read it under their own names and ranges
//             (temperature, top_p, max_tokens) or not at all
//   doc       one line, what di_options_schema shows users
//   min, max  allowed values [min, max], an end excluded when its *_open is set
//   expected  words the range in a validation error; nullptr: ">= min" below it, "<= max" above
// In the order SamplingParams::validate checks them.
#pragma once

#define DI_SAMPLING_SCALAR_FIELDS(X)                                                                                \
  X(int32_t, n, 1, true, "number of completions for the prompt (>= 1)", 1, 128, false, false, nullptr)              \
  X(double, temperature, 1.0, false, "0 = greedy; > 0 scales logits", 0, kNoLimit, false, false, nullptr)           \
  X(double, top_p, 1.0, false, "nucleus sampling mass, (0, 1]", 0, 1, true, false, "a value in (0, 1]")             \
  X(int32_t, top_k, 0, true, "keep the k most likely tokens (0 or -1 = all)", -1, kNoLimit, false, false,           \
    "-1, 0 or a positive count")                                                                                    \
  X(double, min_p, 0.0, true, "drop tokens below min_p times the top probability, [0, 1]", 0, 1, false, false,      \
    "a value in [0, 1]")                                                                                            \
  X(double, repetition_penalty, 1.0, true,                                                                          \
    "multiplicative penalty for tokens of the prompt and the output (> 0, 1 = off)", 0, kNoLimit, true, false,      \
    "> 0")                                                                                                          \
  X(double, presence_penalty, 0.0, true, "penalty for a token present in the output, [-2, 2]", -2, 2, false, false, \
    "a value in [-2, 2]")                                                                                           \
  X(double, frequency_penalty, 0.0, true, "penalty proportional to a token's count in the output, [-2, 2]", -2, 2,  \
    false, false, "a value in [-2, 2]")                                                                             \
  X(int32_t, min_tokens, 0, true, "generate at least this many tokens before stopping", 0, kNoLimit, false, false,  \
    nullptr)                                                                                                        \
  /* -1 (the default) means "until max_model_len"; validate allows it besides >= 1. */                              \
  X(int64_t, max_tokens, -1, false, "most tokens to generate (>= 1)", -kNoLimit, kNoLimit, false, false, nullptr)   \
  X(bool, ignore_eos, false, false, "1: keep generating past end-of-sequence tokens", -kNoLimit, kNoLimit, false,   \
    false, nullptr)                                                                                                 \
  X(bool, logprobs, false, true, "1: return the sampled token's log-probability", -kNoLimit, kNoLimit, false,       \
    false, nullptr)                                                                                                 \
  X(int32_t, top_logprobs, 0, true, "number of alternatives per position (0..20)", 0, 20, false, false,             \
    "a count in [0, 20]")                                                                                           \
  X(bool, skip_special_tokens, true, false, "1 (default): special tokens produce no text", -kNoLimit, kNoLimit,     \
    false, false, nullptr)
