// di_options: create, set, get, serialize. Validation happens here (key known, type right,
// UTF-8 well-formed); the meaning of each value is checked by the code that consumes it.
#include "capi/src/options.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api_guard.h"
#include "base/utf8.h"

namespace di::capi {
namespace {

using nlohmann::json;

// Looks `key` up and checks it has `want` type; on failure fills err and returns nullptr.
const OptionKey* checked_key(const char* key, OptionType want, di_status* status, di_error** err) {
  if (key == nullptr) {
    *status = fail(err, DI_E_INVALID_ARG, "key: must not be NULL");
    return nullptr;
  }
  const OptionKey* k = find_option_key(key);
  if (k == nullptr) {
    *status = fail(err, DI_E_UNSUPPORTED, std::string("option \"") + key + "\": unknown key");
    return nullptr;
  }
  if (k->type != want && !(want == OptionType::kInt64 && k->type == OptionType::kDouble)) {
    *status = fail(err, DI_E_INVALID_ARG,
                   std::string("option \"") + key + "\": expected " +
                       std::string(option_type_name(k->type)) + ", got " +
                       std::string(option_type_name(want)));
    return nullptr;
  }
  return k;
}

di_options::Value make_value(int64_t v) { return {v, std::to_string(v)}; }
di_options::Value make_value(double v) { return {v, json(v).dump()}; }
di_options::Value make_value_str(std::string s) {
  di_options::Value val{s, s};
  return val;
}
di_options::Value make_value_json(json j) {
  std::string text = j.dump();
  return {std::move(j), std::move(text)};
}

// Converts one JSON value for `k`, as di_options_update_json does.
Result<di_options::Value> value_from_json(const OptionKey& k, const json& v) {
  const std::string where = "option \"" + std::string(k.key) + "\"";
  switch (k.type) {
    case OptionType::kInt64:
      if (v.is_number_integer()) return make_value(v.get<int64_t>());
      if (v.is_boolean()) return make_value(static_cast<int64_t>(v.get<bool>()));
      return Status::invalid_argument(where + ": expected an integer, got " + v.dump());
    case OptionType::kDouble:
      if (v.is_number()) return make_value(v.get<double>());
      return Status::invalid_argument(where + ": expected a number, got " + v.dump());
    case OptionType::kString:
      if (v.is_string()) return make_value_str(v.get<std::string>());
      return Status::invalid_argument(where + ": expected a string, got " + v.dump());
    case OptionType::kJson:
      return make_value_json(v);
  }
  return Status::internal(where + ": unknown type");
}

template <class Getter>
di_status get_value(const di_options* options, const char* key, OptionType type, di_error** err,
                    Getter&& getter) {
  DI_REQUIRE_ARG(options, err);
  di_status status = DI_OK;
  const OptionKey* k = find_option_key(key == nullptr ? "" : key);
  if (key == nullptr) return fail(err, DI_E_INVALID_ARG, "key: must not be NULL");
  if (k == nullptr)
    return fail(err, DI_E_UNSUPPORTED, std::string("option \"") + key + "\": unknown key");
  if (k->type != type) {
    return fail(err, DI_E_INVALID_ARG,
                std::string("option \"") + key + "\": is " +
                    std::string(option_type_name(k->type)) + ", read as " +
                    std::string(option_type_name(type)));
  }
  auto it = options->values.find(std::string_view(key));
  if (it == options->values.end())
    return fail(err, DI_E_NOT_FOUND, std::string("option \"") + key + "\": not set");
  getter(it->second);
  return status;
}

// The setters' shared path: checks the key and its type, then stores what `make(k, &value)`
// builds unless it returns an error (already reported through err).
template <class Make>
di_status set_value(di_options* options, const char* key, OptionType type, di_error** err,
                    Make&& make) {
  DI_REQUIRE_ARG(options, err);
  di_status status = DI_OK;
  const OptionKey* k = checked_key(key, type, &status, err);
  if (k == nullptr) return status;
  di_options::Value value;
  status = make(*k, &value);
  if (status != DI_OK) return status;
  options->values[std::string(k->key)] = std::move(value);
  return DI_OK;
}

// A string or JSON option set from text (get_text's counterpart): a string must be UTF-8
// without NUL bytes, and NULL reads as "" only with len 0; JSON text must parse.
di_status set_text(di_options* options, const char* key, OptionType type, const char* text,
                   size_t len, di_error** err) {
  return set_value(options, key, type, err, [&](const OptionKey&, di_options::Value* out) -> di_status {
    const std::string where = std::string("option \"") + key + "\": ";
    if (type == OptionType::kJson) {
      if (text == nullptr) return fail(err, DI_E_INVALID_ARG, where + "json is NULL");
      auto parsed = json::parse(text, text + len, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded()) return fail(err, DI_E_PARSE, where + "not valid JSON");
      *out = make_value_json(std::move(parsed));
      return DI_OK;
    }
    if (text == nullptr && len != 0) return fail(err, DI_E_INVALID_ARG, where + "value is NULL");
    std::string s(text == nullptr ? "" : text, len);
    if (!di::utf8_valid(s)) return fail(err, DI_E_INVALID_ARG, where + "invalid UTF-8");
    if (s.find('\0') != std::string::npos)
      return fail(err, DI_E_INVALID_ARG, where + "contains a NUL byte");
    *out = make_value_str(std::move(s));
    return DI_OK;
  });
}

// An integer or floating-point option's value, copied out.
template <class T>
di_status get_number(const di_options* options, const char* key, OptionType type, T* value,
                     di_error** err) {
  DI_REQUIRE_ARG(value, err);
  return get_value(options, key, type, err, [&](const di_options::Value& v) { *value = std::get<T>(v.v); });
}

// A string or JSON option's text, borrowed from the options.
di_status get_text(const di_options* options, const char* key, OptionType type, const char** text,
                   size_t* len, di_error** err) {
  // Named as the C parameter is: di_options_get_str's `value`, di_options_get_json's `json`.
  if (text == nullptr)
    return fail(err, DI_E_INVALID_ARG,
                std::string(type == OptionType::kJson ? "json" : "value") + ": must not be NULL");
  return get_value(options, key, type, err, [&](const di_options::Value& v) {
    *text = v.text.c_str();
    if (len != nullptr) *len = v.text.size();
  });
}

}  // namespace

json options_as_json(const di_options* options) {
  json j = json::object();
  if (options == nullptr) return j;
  for (const auto& [key, value] : options->values) {
    std::visit([&](const auto& v) { j[key] = v; }, value.v);
  }
  return j;
}

}  // namespace di::capi

using di::capi::fail;
using di::capi::OptionType;

extern "C" {

DI_API di_status di_options_create(di_options** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(out, err);
  *out = new di_options();
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_options_clone(const di_options* src, di_options** out, di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(src, err);
  DI_REQUIRE_ARG(out, err);
  *out = new di_options(*src);
  return DI_OK;
  DI_API_END(err)
}

DI_API void di_options_destroy(di_options* options) { delete options; }

DI_API di_status di_options_set_i64(di_options* options, const char* key, int64_t value,
                                    di_error** err) {
  DI_API_BEGIN
  return di::capi::set_value(
      options, key, OptionType::kInt64, err,
      [&](const di::capi::OptionKey& k, di_options::Value* out) -> di_status {
        *out = k.type == OptionType::kDouble ? di::capi::make_value(static_cast<double>(value))
                                             : di::capi::make_value(value);
        return DI_OK;
      });
  DI_API_END(err)
}

DI_API di_status di_options_set_f64(di_options* options, const char* key, double value,
                                    di_error** err) {
  DI_API_BEGIN
  return di::capi::set_value(
      options, key, OptionType::kDouble, err,
      [&](const di::capi::OptionKey&, di_options::Value* out) -> di_status {
        if (std::isnan(value))
          return fail(err, DI_E_INVALID_ARG,
                      std::string("option \"") + key + "\": NaN is not a value");
        *out = di::capi::make_value(value);
        return DI_OK;
      });
  DI_API_END(err)
}

DI_API di_status di_options_set_str(di_options* options, const char* key, const char* value,
                                    size_t len, di_error** err) {
  DI_API_BEGIN
  return di::capi::set_text(options, key, OptionType::kString, value, len, err);
  DI_API_END(err)
}

DI_API di_status di_options_set_json(di_options* options, const char* key, const char* json,
                                     size_t len, di_error** err) {
  DI_API_BEGIN
  return di::capi::set_text(options, key, OptionType::kJson, json, len, err);
  DI_API_END(err)
}

DI_API di_status di_options_update_json(di_options* options, const char* json, size_t len,
                                        di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(options, err);
  DI_REQUIRE_ARG(json, err);
  auto parsed = nlohmann::json::parse(json, json + len, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object())
    return fail(err, DI_E_PARSE, "options: expected a JSON object");
  // Validate everything first so a bad entry leaves the options unchanged.
  std::map<std::string, di_options::Value, std::less<>> staged;
  for (const auto& [key, value] : parsed.items()) {
    const auto* k = di::capi::find_option_key(key);
    if (k == nullptr) return fail(err, DI_E_UNSUPPORTED, "option \"" + key + "\": unknown key");
    auto v = di::capi::value_from_json(*k, value);
    if (!v) return fail(err, v.status());
    staged[key] = std::move(v).value();
  }
  for (auto& [key, value] : staged) options->values[key] = std::move(value);
  return DI_OK;
  DI_API_END(err)
}

DI_API di_status di_options_get_i64(const di_options* options, const char* key, int64_t* value,
                                    di_error** err) {
  DI_API_BEGIN
  return di::capi::get_number(options, key, OptionType::kInt64, value, err);
  DI_API_END(err)
}

DI_API di_status di_options_get_f64(const di_options* options, const char* key, double* value,
                                    di_error** err) {
  DI_API_BEGIN
  return di::capi::get_number(options, key, OptionType::kDouble, value, err);
  DI_API_END(err)
}

DI_API di_status di_options_get_str(const di_options* options, const char* key,
                                    const char** value, size_t* len, di_error** err) {
  DI_API_BEGIN
  return di::capi::get_text(options, key, OptionType::kString, value, len, err);
  DI_API_END(err)
}

DI_API di_status di_options_get_json(const di_options* options, const char* key,
                                     const char** json, size_t* len, di_error** err) {
  DI_API_BEGIN
  return di::capi::get_text(options, key, OptionType::kJson, json, len, err);
  DI_API_END(err)
}

DI_API di_status di_options_to_json(const di_options* options, char** json, size_t* len,
                                    di_error** err) {
  DI_API_BEGIN
  DI_REQUIRE_ARG(options, err);
  DI_REQUIRE_ARG(json, err);
  return di::capi::copy_text_out(di::capi::options_as_json(options).dump(), json, len, err);
  DI_API_END(err)
}

DI_API const char* di_options_schema(void) {
  try {
    return di::capi::option_schema_json();
  } catch (...) {
    return "[]";
  }
}

}  // extern "C"
