// Typed reads of config.json fields with messages that name the field ("config.json: hidden_size:
// expected an integer, got \"abc\""). Shared by every family's config parser; knows no family.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace di::engine {

inline Status config_field_error(const std::string& key, const std::string& expected,
                                 const nlohmann::json* got) {
  std::string msg = "config.json: " + key + ": ";
  if (!got) return Status::invalid_argument(msg + "missing (" + expected + " required)");
  std::string text = got->dump();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return Status::invalid_argument(msg + "expected " + expected + ", got " + text);
}

inline const nlohmann::json* config_find(const nlohmann::json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

// Required integer field (a float with an integral value is accepted, as Python writes 4.0).
inline Result<int64_t> config_int(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json* v = config_find(j, key);
  if (v && v->is_number_integer()) return v->get<int64_t>();
  if (v && v->is_number_float() && v->get<double>() == static_cast<double>(static_cast<int64_t>(v->get<double>())))
    return static_cast<int64_t>(v->get<double>());
  return config_field_error(key, "an integer", v);
}

inline Result<int64_t> config_int(const nlohmann::json& j, const std::string& key, int64_t def) {
  if (!config_find(j, key)) return def;
  return config_int(j, key);
}

inline Result<double> config_number(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json* v = config_find(j, key);
  if (v && v->is_number()) return v->get<double>();
  return config_field_error(key, "a number", v);
}

inline Result<double> config_number(const nlohmann::json& j, const std::string& key, double def) {
  if (!config_find(j, key)) return def;
  return config_number(j, key);
}

inline Result<std::string> config_string(const nlohmann::json& j, const std::string& key,
                                         const std::string& def) {
  const nlohmann::json* v = config_find(j, key);
  if (!v) return def;
  if (v->is_string()) return v->get<std::string>();
  return config_field_error(key, "a string", v);
}

inline Result<bool> config_bool(const nlohmann::json& j, const std::string& key, bool def) {
  const nlohmann::json* v = config_find(j, key);
  if (!v) return def;
  if (v->is_boolean()) return v->get<bool>();
  return config_field_error(key, "true or false", v);
}

}  // namespace di::engine
