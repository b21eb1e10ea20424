// CustomToolInput: a custom tool call's streamed arguments `{"input": "…"}` → the raw input text,
// decoded piece by piece as the JSON arrives (escapes and surrogate pairs split anywhere).
// Arguments of another shape pass through unchanged. Knows nothing of events or items.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace di::recipe {

class CustomToolInput {
 public:
  // Takes the next piece of the arguments' JSON text; returns the input text it completes.
  std::string push(std::string_view piece);
  // The arguments ended: returns what is still held (the raw text when the shape never
  // matched, or an escape cut off by the end).
  std::string finish();

 private:
  enum class Mode { kPrefix, kString, kDone, kRaw };
  std::string decode(std::string_view s);
  void append_code_point(uint32_t cp, std::string* out);

  Mode mode_ = Mode::kPrefix;
  std::string held_;         // kPrefix: raw text so far; kString: an incomplete escape
  uint32_t high_surrogate_ = 0;
};

}  // namespace di::recipe
