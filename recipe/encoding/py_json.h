// Python-style JSON text: what `json.dumps(value, ensure_ascii=False)` prints, which DeepSeek's
// reference encoders put into prompts (tool schemas, non-string tool arguments, response
// formats). Serialization only; parsing stays with nlohmann (ordered, so key order is kept).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace di::recipe {

// Separators ", " and ": ", keys in stored order, non-ASCII kept raw, control characters
// escaped, floats as Python's repr (0.1, 3.0, -0.0, 1e+100, 1e-05).
std::string py_json_dumps(const nlohmann::ordered_json& value);

// A string as json.dumps(ensure_ascii=False) quotes it, appended to `out`.
void py_json_string(const std::string& s, std::string& out);

// Python repr of a double: shortest round-trip digits; scientific when the decimal exponent
// is < -4 or >= 16.
std::string py_float_repr(double value);

}  // namespace di::recipe
