// Thinking-mode and reasoning-effort resolution shared by the request parsers: an explicit
// thinking switch wins, then an effort of "none", then the default.
#pragma once

#include <optional>
#include <string>

#include "recipe/protocol/conversation.h"

namespace di::recipe {

// Maps an API effort word onto the reference encoders' levels (nullopt for "none"/unknown).
inline std::optional<ReasoningEffort> effort_from_word(const std::string& w) {
  if (w == "minimal" || w == "low") return ReasoningEffort::kLow;
  if (w == "medium" || w == "high") return ReasoningEffort::kHigh;
  if (w == "xhigh") return ReasoningEffort::kXhigh;
  if (w == "max" || w == "ultra") return ReasoningEffort::kMax;
  return std::nullopt;
}

struct ThinkingChoice {
  std::optional<bool> explicit_switch;  // thinking.type enabled/adaptive → true, disabled → false
  std::optional<std::string> effort;    // the effort word as sent
};

// Sets conversation.thinking / reasoning_effort. Returns whether thinking was asked for
// explicitly (a forced tool_choice then conflicts instead of switching thinking off).
inline bool resolve_thinking(const ThinkingChoice& c, bool default_thinking, Conversation& conv) {
  bool explicit_on = false;
  if (c.explicit_switch) {
    conv.thinking = *c.explicit_switch;
    explicit_on = conv.thinking;
  } else if (c.effort && *c.effort == "none") {
    conv.thinking = false;
  } else if (c.effort) {
    conv.thinking = true;
    explicit_on = true;
  } else {
    conv.thinking = default_thinking;
  }
  if (conv.thinking && c.effort) conv.reasoning_effort = effort_from_word(*c.effort);
  return explicit_on;
}

}  // namespace di::recipe
