// The control-token strings of DeepSeek's V3.2 / V4 / V4.1 prompt formats. Strings only; the
// tokenizer owns their ids. `｜` is U+FF5C and `▁` is U+2581.
#pragma once

#include <string_view>

namespace di::recipe::tokens {

inline constexpr std::string_view kBos = "<｜begin▁of▁sentence｜>";
inline constexpr std::string_view kEos = "<｜end▁of▁sentence｜>";
inline constexpr std::string_view kSystem = "<｜System｜>";  // V4.1 only
inline constexpr std::string_view kUser = "<｜User｜>";
inline constexpr std::string_view kAssistant = "<｜Assistant｜>";
inline constexpr std::string_view kThinkStart = "<think>";
inline constexpr std::string_view kThinkEnd = "</think>";
inline constexpr std::string_view kDsml = "｜DSML｜";
inline constexpr std::string_view kLatestReminder = "<｜latest_reminder｜>";
// V4.1's image placeholder as DeepSeek's reference encoder spells it.
inline constexpr std::string_view kImage = "<｜deepseek_image｜>";
// What a model without vision sees in place of an image.
inline constexpr std::string_view kUnsupportedImage = "[Unsupported Image]";

}  // namespace di::recipe::tokens
