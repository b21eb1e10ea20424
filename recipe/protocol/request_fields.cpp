// Field readers for request JSON and the body parser (UTF-8 and nesting checks first, so a
// hostile body can neither recurse the parser deep nor smuggle invalid text into a prompt).
#include "recipe/protocol/request_fields.h"

#include <cmath>

#include "base/utf8.h"
#include "recipe/encoding/json_text.h"

namespace di::recipe {
namespace {

std::string join_list(const std::vector<std::string_view>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += i + 1 == v.size() ? " or " : ", ";
    out += "\"" + std::string(v[i]) + "\"";
  }
  return out;
}

std::string num_text(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  // Shortest form that reads back the same, for messages.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) return buf;
  }
  return s;
}

}  // namespace

std::string describe_json(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case ordered_json::value_t::number_integer: return std::to_string(v.get<int64_t>());
    case ordered_json::value_t::number_unsigned: return std::to_string(v.get<uint64_t>());
    case ordered_json::value_t::number_float: return num_text(v.get<double>());
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "an array";
    case ordered_json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

Result<ordered_json> parse_request_body(Protocol protocol, std::string_view body, int max_depth) {
  auto bad = [&](const std::string& m) { return ApiError::bad_request(protocol, "", m).to_status(); };
  if (!utf8_valid(body)) return bad("request body: expected UTF-8 JSON, got invalid UTF-8");
  JsonTextResult parsed = parse_json_text(body, max_depth);
  if (parsed.error == JsonTextResult::Error::kTooDeep) {
    ApiError e = ApiError::bad_request(protocol, "", "request body: JSON nested deeper than " +
                                                         std::to_string(max_depth) + " levels");
    e.code = "json_too_deep";
    return e.to_status();
  }
  if (parsed.error != JsonTextResult::Error::kNone)
    return bad("request body: could not parse the JSON body of your request (expected a JSON object)");
  ordered_json j = std::move(parsed.value);
  if (!j.is_object()) return bad("request body: expected a JSON object, got " + describe_json(j));
  return j;
}

std::string Fields::param(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

std::string Fields::element(std::string_view key, size_t i) const {
  if (protocol_ == Protocol::kMessages) return param(key) + "." + std::to_string(i);
  return param(key) + "[" + std::to_string(i) + "]";
}

Status Fields::error(std::string_view key, const std::string& message) const {
  return error_at(param(key), message);
}

Status Fields::json_string(std::string_view key, const std::string& text, ordered_json* out) const {
  JsonTextResult parsed = parse_json_text(text, kMaxArgumentsDepth);
  if (parsed.error == JsonTextResult::Error::kTooDeep) {
    ApiError e = ApiError::bad_request(protocol_, param(key), param(key) + ": JSON nested deeper than " +
                                                                   std::to_string(kMaxArgumentsDepth) + " levels");
    e.code = "json_too_deep";
    return e.to_status();
  }
  if (parsed.error != JsonTextResult::Error::kNone || !parsed.value.is_object())
    return error(key, "expected a JSON object encoded as a string");
  *out = std::move(parsed.value);
  return Status::ok();
}

Status Fields::error_at(const std::string& param, const std::string& message) const {
  std::string m = param.empty() ? message : param + ": " + message;
  return ApiError::bad_request(protocol_, param, std::move(m)).to_status();
}

const ordered_json* Fields::get(std::string_view key) const {
  auto it = obj_.find(std::string(key));
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::optional<std::string>> Fields::str(std::string_view key) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return error(key, "expected a string, got " + describe_json(*v));
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::string> Fields::required_str(std::string_view key) const {
  DI_ASSIGN_OR_RETURN(auto s, str(key));
  if (!s) return error(key, "required, expected a string");
  return *s;
}

Result<std::optional<bool>> Fields::boolean(std::string_view key) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return error(key, "expected a boolean, got " + describe_json(*v));
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<double>> Fields::number(std::string_view key, double lo, double hi,
                                             bool lo_open, bool hi_open) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return std::optional<double>();
  if (!v->is_number()) return error(key, "expected a number, got " + describe_json(*v));
  double d = v->get<double>();
  bool ok = std::isfinite(d) && (lo_open ? d > lo : d >= lo) && (hi_open ? d < hi : d <= hi);
  if (!ok) {
    // A range with no upper end (repetition_penalty's) is worded as its lower bound alone.
    const std::string range =
        std::isinf(hi) ? std::string(lo_open ? "> " : ">= ") + num_text(lo)
                       : "in " + std::string(lo_open ? "(" : "[") + num_text(lo) + ", " + num_text(hi) +
                             (hi_open ? ")" : "]");
    return error(key, "expected a number " + range + ", got " + describe_json(*v));
  }
  return std::optional<double>(d);
}

Result<std::optional<int64_t>> Fields::integer(std::string_view key, int64_t lo, int64_t hi) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return std::optional<int64_t>();
  auto range = [&] {
    return error(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                          "], got " + describe_json(*v));
  };
  int64_t x = 0;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return range();
    x = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18)
      return error(key, "expected an integer, got " + describe_json(*v));
    x = static_cast<int64_t>(d);
  } else {
    return error(key, "expected an integer, got " + describe_json(*v));
  }
  if (x < lo || x > hi) return range();
  return std::optional<int64_t>(x);
}

Result<std::optional<std::string>> Fields::one_of(std::string_view key,
                                                  const std::vector<std::string_view>& allowed) const {
  DI_ASSIGN_OR_RETURN(auto s, str(key));
  if (!s) return s;
  for (auto a : allowed)
    if (*s == a) return s;
  return error(key, "expected one of " + join_list(allowed) + ", got \"" + *s + "\"");
}

Result<const ordered_json*> Fields::array(std::string_view key) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return static_cast<const ordered_json*>(nullptr);
  if (!v->is_array()) return error(key, "expected an array, got " + describe_json(*v));
  return v;
}

Result<const ordered_json*> Fields::object(std::string_view key) const {
  const ordered_json* v = get(key);
  if (v == nullptr) return static_cast<const ordered_json*>(nullptr);
  if (!v->is_object()) return error(key, "expected an object, got " + describe_json(*v));
  return v;
}

}  // namespace di::recipe
