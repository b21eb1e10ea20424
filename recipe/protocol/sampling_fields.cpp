// Shared sampling-field validation. The scalar fields and their ranges are
// request/sampling_fields.h's rows marked api (which follow vLLM's SamplingParams checks and
// OpenAI's documented bounds); the list-valued ones are read here by hand.
#include "recipe/protocol/sampling_fields.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "request/sampling_params.h"

namespace di::recipe {

namespace {

// One field of sampling_fields.h from the body, unless a protocol's reader set it already; its
// range is the row's, an integer's also bounded by its type.
template <typename T>
Status read_field(const Fields& f, const char* name, double min, double max, bool min_open, bool max_open,
                  std::optional<T>& out) {
  if (out) return Status::ok();
  if constexpr (std::is_same_v<T, bool>) {
    DI_ASSIGN_OR_RETURN(out, f.boolean(name));
  } else if constexpr (std::is_floating_point_v<T>) {
    DI_ASSIGN_OR_RETURN(out, f.number(name, min, max, min_open, max_open));
  } else {
    const int64_t lo = std::isfinite(min) ? static_cast<int64_t>(min) : std::numeric_limits<T>::min();
    const int64_t hi = std::isfinite(max) ? static_cast<int64_t>(max) : std::numeric_limits<T>::max();
    DI_ASSIGN_OR_RETURN(std::optional<int64_t> v, f.integer(name, lo, hi));
    if (v) out = static_cast<T>(*v);
  }
  return Status::ok();
}

}  // namespace

Status read_extra_sampling(const Fields& f, SamplingOptions& s) {
  using request::kNoLimit;
#define DI_READ_API_FIELD(type, name, init, api, doc, min, max, min_open, max_open, expected) \
  if (api) DI_RETURN_IF_ERROR(read_field(f, #name, min, max, min_open, max_open, s.name));
  DI_SAMPLING_SCALAR_FIELDS(DI_READ_API_FIELD)
#undef DI_READ_API_FIELD
  if (!s.seed) {
    DI_ASSIGN_OR_RETURN(s.seed, f.integer("seed", INT64_MIN, INT64_MAX));
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
