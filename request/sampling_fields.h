// The scalar fields of SamplingParams as one table: each field's name (the same in di_options,
// in the APIs' JSON bodies and in the struct), its type, its allowed range and its one-line doc.
// The C ABI's option keys (option_keys.cpp), the di_options reader and writer
// (engine_options.cpp) and SamplingParams::validate all walk this table, so a scalar field is
// named once here. The list-valued fields (logit_bias, stop, stop_token_ids) and seed have their
// own shapes and are read where they are used.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <variant>

#include "request/sampling_params.h"

namespace di::request {

struct SamplingField {
  using Member = std::variant<int32_t SamplingParams::*, int64_t SamplingParams::*,
                              double SamplingParams::*, bool SamplingParams::*>;
  const char* name;
  Member member;
  const char* doc;  // what di_options_schema shows users
  // Allowed values: [min, max], an end excluded when its *_open is set. `expected` words the
  // range in a validation error; nullptr: ">= min" below the range, "<= max" above it.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
  const char* expected = nullptr;

  // The field's value in `p`, widened to double (booleans are 0 / 1).
  double get(const SamplingParams& p) const {
    return std::visit([&](auto m) { return static_cast<double>(p.*m); }, member);
  }
  bool is_double() const { return std::holds_alternative<double SamplingParams::*>(member); }
  bool is_bool() const { return std::holds_alternative<bool SamplingParams::*>(member); }
  bool in_range(double v) const {
    return std::isfinite(v) && (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
  }
};

inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// In the order SamplingParams::validate checks them.
inline std::span<const SamplingField> sampling_fields() {
  using P = SamplingParams;
  static const SamplingField kFields[] = {
      {"n", &P::n, "number of completions for the prompt (>= 1)", 1, 128},
      {"temperature", &P::temperature, "0 = greedy; > 0 scales logits", 0, kNoLimit},
      {"top_p", &P::top_p, "nucleus sampling mass, (0, 1]", 0, 1, true, false, "a value in (0, 1]"},
      {"top_k", &P::top_k, "keep the k most likely tokens (0 or -1 = all)", -1, kNoLimit, false,
       false, "-1, 0 or a positive count"},
      {"min_p", &P::min_p, "drop tokens below min_p times the top probability, [0, 1]", 0, 1, false,
       false, "a value in [0, 1]"},
      {"repetition_penalty", &P::repetition_penalty,
       "multiplicative penalty for seen tokens (> 0, 1 = off)", 0, kNoLimit, true, false, "> 0"},
      {"presence_penalty", &P::presence_penalty,
       "penalty for a token present in the output, [-2, 2]", -2, 2, false, false,
       "a value in [-2, 2]"},
      {"frequency_penalty", &P::frequency_penalty,
       "penalty proportional to a token's count in the output, [-2, 2]", -2, 2, false, false,
       "a value in [-2, 2]"},
      {"min_tokens", &P::min_tokens, "generate at least this many tokens before stopping", 0,
       kNoLimit},
      // -1 (the default) means "until max_model_len"; validate allows it besides >= 1.
      {"max_tokens", &P::max_tokens, "most tokens to generate (>= 1)"},
      {"ignore_eos", &P::ignore_eos, "1: keep generating past end-of-sequence tokens"},
      {"logprobs", &P::logprobs, "1: return the sampled token's log-probability"},
      {"top_logprobs", &P::top_logprobs, "number of alternatives per position (0..20)", 0, 20,
       false, false, "a count in [0, 20]"},
      {"skip_special_tokens", &P::skip_special_tokens, "1 (default): special tokens produce no text"},
  };
  return kFields;
}

}  // namespace di::request
