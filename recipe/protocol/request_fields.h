// Typed, validated reads of request JSON fields. Each failure is the protocol's 400 ApiError
// (as a Status) naming the field, what was expected and what came. Null counts as absent, the
// way the OpenAI and Anthropic APIs treat optional fields. Knows no protocol's field list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/protocol/api_error.h"

namespace di::recipe {

using ordered_json = nlohmann::ordered_json;

// "a string", "an array", "null", or the value itself for numbers and booleans.
std::string describe_json(const ordered_json& v);

// Parses a request body: valid UTF-8 JSON object, nesting at most `max_depth` deep.
Result<ordered_json> parse_request_body(Protocol protocol, std::string_view body,
                                        int max_depth = 128);

class Fields {
 public:
  // `obj` must outlive the Fields. `path` is the param prefix ("" at the top level,
  // "messages[2]" below); Anthropic params use dots ("messages.2") — join() handles both.
  Fields(Protocol protocol, const ordered_json& obj, std::string path)
      : protocol_(protocol), obj_(obj), path_(std::move(path)) {}

  Protocol protocol() const { return protocol_; }
  const ordered_json& json() const { return obj_; }
  // This object's own param name ("" at the top level).
  const std::string& path() const { return path_; }
  // The param name of `key` under this object.
  std::string param(std::string_view key) const;
  // The param name of element `i` of array field `key`.
  std::string element(std::string_view key, size_t i) const;
  // A 400 for `key` with `message` (the message gets "param: " in front).
  Status error(std::string_view key, const std::string& message) const;
  Status error_at(const std::string& param, const std::string& message) const;
  // `text` (the string value of `key`, e.g. a tool call's arguments) parsed as a JSON object
  // into *out: a 400 naming `key` when it is not one, code json_too_deep when it nests deeper
  // than a request body may.
  Status json_string(std::string_view key, const std::string& text, ordered_json* out) const;

  // The raw value, or nullptr when absent or null.
  const ordered_json* get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key) != nullptr; }

  Result<std::optional<std::string>> str(std::string_view key) const;
  Result<std::string> required_str(std::string_view key) const;
  Result<std::optional<bool>> boolean(std::string_view key) const;
  // Number in [lo, hi] (open ends when lo_open / hi_open).
  Result<std::optional<double>> number(std::string_view key, double lo, double hi,
                                       bool lo_open = false, bool hi_open = false) const;
  // Integer in [lo, hi]; 2.0 is accepted as 2, 2.5 is not.
  Result<std::optional<int64_t>> integer(std::string_view key, int64_t lo, int64_t hi) const;
  // One of `allowed` (strings).
  Result<std::optional<std::string>> one_of(std::string_view key,
                                            const std::vector<std::string_view>& allowed) const;
  Result<const ordered_json*> array(std::string_view key) const;   // nullptr when absent
  Result<const ordered_json*> object(std::string_view key) const;  // nullptr when absent

 private:
  Protocol protocol_;
  const ordered_json& obj_;
  std::string path_;
};

}  // namespace di::recipe
