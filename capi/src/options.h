// di_options: the typed key/value bag behind the C ABI's settings. Other capi files read it
// through the accessors below when they build engine, sampling or recipe configuration.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "capi/src/option_keys.h"

struct di_options {
  struct Value {
    std::variant<int64_t, double, std::string, nlohmann::json> v;
    std::string text;  // the string, or the compact JSON text, handed out by the getters
  };
  std::map<std::string, Value, std::less<>> values;
};

namespace di::capi {

// The whole options object as a JSON object (keys sorted), for the consumers that take JSON.
nlohmann::json options_as_json(const di_options* options);

}  // namespace di::capi
