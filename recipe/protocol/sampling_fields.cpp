// Shared sampling-field validation. Ranges follow vLLM's SamplingParams checks and OpenAI's
// documented bounds.
#include "recipe/protocol/sampling_fields.h"

#include <cstdlib>

namespace di::recipe {

Status read_extra_sampling(const Fields& f, SamplingOptions& s) {
  if (!s.top_k) {
    DI_ASSIGN_OR_RETURN(s.top_k, f.integer("top_k", -1, INT32_MAX));
  }
  if (!s.min_p) {
    DI_ASSIGN_OR_RETURN(s.min_p, f.number("min_p", 0, 1));
  }
  if (!s.repetition_penalty) {
    DI_ASSIGN_OR_RETURN(s.repetition_penalty, f.number("repetition_penalty", 0, 2, true, false));
  }
  if (!s.presence_penalty) {
    DI_ASSIGN_OR_RETURN(s.presence_penalty, f.number("presence_penalty", -2, 2));
  }
  if (!s.frequency_penalty) {
    DI_ASSIGN_OR_RETURN(s.frequency_penalty, f.number("frequency_penalty", -2, 2));
  }
  if (!s.seed) {
    DI_ASSIGN_OR_RETURN(s.seed, f.integer("seed", INT64_MIN, INT64_MAX));
  }
  if (!s.min_tokens) {
    DI_ASSIGN_OR_RETURN(s.min_tokens, f.integer("min_tokens", 0, INT32_MAX));
  }
  if (!s.n) {
    DI_ASSIGN_OR_RETURN(s.n, f.integer("n", 1, 128));
  }
  if (!s.logprobs) {
    DI_ASSIGN_OR_RETURN(s.logprobs, f.boolean("logprobs"));
  }
  if (!s.top_logprobs) {
    DI_ASSIGN_OR_RETURN(s.top_logprobs, f.integer("top_logprobs", 0, 20));
  }
  if (s.top_logprobs && *s.top_logprobs > 0 && s.logprobs && !*s.logprobs)
    return f.error("top_logprobs", "requires logprobs to be true");
  if (s.min_tokens && s.max_tokens && *s.min_tokens > *s.max_tokens)
    return f.error("min_tokens", "must not exceed the output token limit (" +
                                     std::to_string(*s.max_tokens) + "), got " +
                                     std::to_string(*s.min_tokens));
  if (s.logit_bias.is_null()) {
    DI_ASSIGN_OR_RETURN(const ordered_json* lb, f.object("logit_bias"));
    if (lb != nullptr) {
      for (const auto& [k, v] : lb->items()) {
        char* end = nullptr;
        long long id = std::strtoll(k.c_str(), &end, 10);
        if (k.empty() || *end != '\0' || id < 0 || id > INT32_MAX)
          return f.error_at(f.param("logit_bias") + "." + k,
                            "expected a token id (a non-negative integer) as key, got \"" + k + "\"");
        if (!v.is_number() || v.get<double>() < -100 || v.get<double>() > 100)
          return f.error_at(f.param("logit_bias") + "." + k,
                            "expected a bias in [-100, 100], got " + describe_json(v));
      }
      s.logit_bias = *lb;
    }
  }
  if (s.stop_token_ids.empty()) {
    DI_ASSIGN_OR_RETURN(const ordered_json* ids, f.array("stop_token_ids"));
    if (ids != nullptr) {
      for (size_t i = 0; i < ids->size(); ++i) {
        const ordered_json& v = (*ids)[i];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
          return f.error_at(f.element("stop_token_ids", i),
                            "expected a token id (a non-negative integer), got " + describe_json(v));
        s.stop_token_ids.push_back(v.get<int64_t>());
      }
    }
  }
  return Status::ok();
}

Status read_stop(const Fields& f, std::string_view key, size_t max_count, bool reject_empty,
                 std::vector<std::string>& out) {
  const ordered_json* v = f.get(key);
  if (v == nullptr) return Status::ok();
  if (v->is_string()) {
    if (v->get_ref<const std::string&>().empty()) {
      if (reject_empty) return f.error(key, "stop sequences must not be empty");
      return Status::ok();
    }
    out.push_back(v->get<std::string>());
    return Status::ok();
  }
  if (!v->is_array())
    return f.error(key, "expected a string or an array of strings, got " + describe_json(*v));
  if (v->size() > max_count)
    return f.error(key, "expected at most " + std::to_string(max_count) + " stop sequences, got " +
                            std::to_string(v->size()));
  for (size_t i = 0; i < v->size(); ++i) {
    const ordered_json& e = (*v)[i];
    if (!e.is_string())
      return f.error_at(f.element(key, i), "expected a string, got " + describe_json(e));
    if (e.get_ref<const std::string&>().empty()) {
      if (reject_empty) return f.error_at(f.element(key, i), "stop sequences must not be empty");
      continue;
    }
    out.push_back(e.get<std::string>());
  }
  return Status::ok();
}

}  // namespace di::recipe
