// Typed reads of config.json fields with messages that name the field ("config.json: hidden_size:
// expected an integer, got \"abc\""). Shared by every family's config parser; knows no family.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

// bos_token_id (absent or null: -1) and eos_token_id (an integer or a list; absent: none).
inline Status config_token_ids(const nlohmann::json& j, int32_t* bos_token_id, std::vector<int32_t>* eos_token_ids) {
  DI_ASSIGN_OR_RETURN(int64_t bos, config_int(j, "bos_token_id", -1));
  if (bos < -1 || bos > INT32_MAX) return config_field_error("bos_token_id", "a token id", config_find(j, "bos_token_id"));
  *bos_token_id = static_cast<int32_t>(bos);
  const nlohmann::json* eos = config_find(j, "eos_token_id");
  if (!eos) return Status::ok();
  const bool list = eos->is_array();
  for (const nlohmann::json& e : list ? *eos : nlohmann::json::array({*eos})) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > INT32_MAX)
      return config_field_error("eos_token_id", "a token id or a list of token ids", eos);
    eos_token_ids->push_back(e.get<int32_t>());
  }
  return Status::ok();
}

}  // namespace di::engine
