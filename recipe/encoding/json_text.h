// parse_json_text: untrusted JSON text (a request body, a tool call's `arguments` string) into
// ordered_json with bounded nesting and in time linear in the text. Only parsing: what the
// value must look like is the caller's business.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace di::recipe {

// How deep a JSON value inside a string field (a tool call's `arguments`) may nest: the same
// bound as a request body.
inline constexpr int kMaxArgumentsDepth = 128;

struct JsonTextResult {
  enum class Error { kNone, kSyntax, kTooDeep };
  Error error = Error::kNone;
  nlohmann::ordered_json value;  // valid when error == kNone
};

// nlohmann's ordered_map finds each key by a linear scan, so its own parser is quadratic in an
// object's key count (200k keys: tens of seconds); this one indexes keys while building and
// keeps nlohmann's rules otherwise (strict syntax, nothing after the value, a repeated key keeps
// its first position and its last value), except that a raw NUL byte is an error, not the end.
// Arrays and objects may nest at most `max_depth`.
JsonTextResult parse_json_text(std::string_view text, int max_depth);

}  // namespace di::recipe
