// RenderedPrompt: a prompt as an ordered list of segments, each either template text (may
// contain control tokens) or content (user-supplied text that must tokenize as plain text).
// Rendering only; tokenization happens in recipe/prepare with the tokenizer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace di::recipe {

struct PromptSegment {
  std::string text;
  bool special = false;  // true: template text, control tokens allowed
};

struct RenderedPrompt {
  std::vector<PromptSegment> segments;
  // V4.1 with images: {"images": [{"type": "image", "url": ...}, ...]} in placeholder order.
  nlohmann::ordered_json multi_modal_data;

  void tmpl(std::string_view s) { append(s, true); }
  void text(std::string_view s) { append(s, false); }
  std::string str() const {
    std::string out;
    for (const auto& s : segments) out += s.text;
    return out;
  }

 private:
  void append(std::string_view s, bool special) {
    if (s.empty()) return;
    if (!segments.empty() && segments.back().special == special) {
      segments.back().text.append(s);
    } else {
      segments.push_back({std::string(s), special});
    }
  }
};

}  // namespace di::recipe
