// SamplingParams::validate: range checks with messages that name the field.
#include "engine/sample/sampling_params.h"

#include <cmath>
#include <sstream>

#include "request/sampling_params.h"

// In the struct's own namespace (the request seam's); the checks are the engine's.
namespace di::request {
namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

Status bad(const std::string& field, const std::string& expected, const std::string& got) {
  return Status::invalid_argument(field + ": expected " + expected + ", got " + got);
}

// The field's value as an error message shows it: whole numbers without a decimal point.
std::string shown(const SamplingField& f, double v) {
  return f.is_double() ? num(v) : std::to_string(static_cast<int64_t>(v));
}

}  // namespace

Status SamplingParams::validate(int64_t vocab_size) const {
  for (const SamplingField& f : sampling_fields()) {
    const double v = f.get(*this);
    if (f.in_range(v)) continue;
    if (f.expected) return bad(f.name, f.expected, shown(f, v));
    const bool above = std::isfinite(f.max) && v > f.max;  // NaN and infinities count as below
    return above ? bad(f.name, "<= " + shown(f, f.max), shown(f, v))
                 : bad(f.name, ">= " + shown(f, f.min), shown(f, v));
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0 || id >= vocab_size)
      return bad("logit_bias", "token ids in [0, " + std::to_string(vocab_size) + ")", std::to_string(id));
    if (!std::isfinite(bias) || bias < -100 || bias > 100)
      return bad("logit_bias[" + std::to_string(id) + "]", "a bias in [-100, 100]", num(bias));
  }
  if (max_tokens == 0 || max_tokens < -1) return bad("max_tokens", ">= 1", std::to_string(max_tokens));
  if (max_tokens > 0 && min_tokens > max_tokens)
    return bad("min_tokens", "<= max_tokens (" + std::to_string(max_tokens) + ")", std::to_string(min_tokens));
  for (size_t i = 0; i < stop_token_ids.size(); ++i) {
    if (stop_token_ids[i] < 0 || stop_token_ids[i] >= vocab_size)
      return bad("stop_token_ids[" + std::to_string(i) + "]",
                 "a token id in [0, " + std::to_string(vocab_size) + ")", std::to_string(stop_token_ids[i]));
  }
  for (size_t i = 0; i < stop.size(); ++i) {
    if (stop[i].empty()) return bad("stop[" + std::to_string(i) + "]", "a non-empty string", "\"\"");
  }
  return Status::ok();
}

}  // namespace di::request
