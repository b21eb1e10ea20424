// SamplingParams::validate: range checks with messages that name the field.
#include "engine/sample/sampling_params.h"

#include <cmath>
#include <sstream>

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

}  // namespace

Status SamplingParams::validate(int64_t vocab_size) const {
  if (n < 1) return bad("n", ">= 1", std::to_string(n));
  if (n > 128) return bad("n", "<= 128", std::to_string(n));
  if (!std::isfinite(temperature) || temperature < 0) return bad("temperature", ">= 0", num(temperature));
  if (!std::isfinite(top_p) || top_p <= 0 || top_p > 1) return bad("top_p", "a value in (0, 1]", num(top_p));
  if (top_k < -1) return bad("top_k", "-1, 0 or a positive count", std::to_string(top_k));
  if (!std::isfinite(min_p) || min_p < 0 || min_p > 1) return bad("min_p", "a value in [0, 1]", num(min_p));
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0)
    return bad("repetition_penalty", "> 0", num(repetition_penalty));
  if (!std::isfinite(presence_penalty) || presence_penalty < -2 || presence_penalty > 2)
    return bad("presence_penalty", "a value in [-2, 2]", num(presence_penalty));
  if (!std::isfinite(frequency_penalty) || frequency_penalty < -2 || frequency_penalty > 2)
    return bad("frequency_penalty", "a value in [-2, 2]", num(frequency_penalty));
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0 || id >= vocab_size)
      return bad("logit_bias", "token ids in [0, " + std::to_string(vocab_size) + ")", std::to_string(id));
    if (!std::isfinite(bias) || bias < -100 || bias > 100)
      return bad("logit_bias[" + std::to_string(id) + "]", "a bias in [-100, 100]", num(bias));
  }
  if (min_tokens < 0) return bad("min_tokens", ">= 0", std::to_string(min_tokens));
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
  if (top_logprobs < 0 || top_logprobs > 20) return bad("top_logprobs", "a count in [0, 20]", std::to_string(top_logprobs));
  return Status::ok();
}

}  // namespace di::request
