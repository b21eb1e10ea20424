// SamplingParams: what one request asks of the sampler and of the stop logic; its scalar fields
// are the rows of sampling_fields.h. Plain data, part of
// the typed request the recipe fills and the engine consumes (engine_request.h); the sampler and
// the output processor read it, nothing writes it after submission. Its validation is the
// engine's (engine/sample/sampling_params.cpp), which knows the vocabulary.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "request/sampling_fields.h"

namespace di::request {

inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();

struct SamplingParams {
#define DI_SAMPLING_MEMBER(type, name, init, ...) type name = init;
  DI_SAMPLING_SCALAR_FIELDS(DI_SAMPLING_MEMBER)
#undef DI_SAMPLING_MEMBER
  std::vector<std::pair<int32_t, float>> logit_bias;  // token id, bias in [-100, 100]
  std::vector<int32_t> stop_token_ids;  // EOS-like: end generation (after min_tokens)
  std::vector<std::string> stop;        // stop strings, removed from the text
  std::optional<uint64_t> seed;         // unset: the engine draws one at submission

  // Checks every field; the message names the field and the value that came.
  Status validate(int64_t vocab_size) const;
};

// One row of sampling_fields.h as data, for the code that walks every scalar field.
struct SamplingField {
  using Member = std::variant<int32_t SamplingParams::*, int64_t SamplingParams::*,
                              double SamplingParams::*, bool SamplingParams::*>;
  const char* name;
  Member member;
  bool api;         // the APIs' bodies carry it under this name and range
  const char* doc;  // what di_options_schema shows users
  double min, max;  // allowed values: [min, max], an end excluded when its *_open is set
  bool min_open, max_open;
  const char* expected;  // the range in words for a validation error, or nullptr

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

// The rows of sampling_fields.h, in its order (the order SamplingParams::validate checks them).
inline std::span<const SamplingField> sampling_fields() {
#define DI_SAMPLING_ROW(type, name, init, api, doc, min, max, min_open, max_open, expected) \
  {#name, &SamplingParams::name, api, doc, min, max, min_open, max_open, expected},
  static const SamplingField kFields[] = {DI_SAMPLING_SCALAR_FIELDS(DI_SAMPLING_ROW)};
#undef DI_SAMPLING_ROW
  return kFields;
}

}  // namespace di::request
