// The prompt encoders: DeepSeek's message lists (the form the reference Python encoders'
// `encode_messages(messages, **kwargs)` takes) → prompt segments. One entry point per version;
// no tokenization, no request validation beyond what the reference encoders themselves check.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "recipe/encoding/prompt.h"

namespace di::recipe {

enum class Encoding { kDsv32, kDsv4, kDsv41 };

std::string_view encoding_name(Encoding e);  // "dsv32", "dsv4", "dsv41"
Result<Encoding> parse_encoding(std::string_view name);

// The reference encoders' keyword arguments.
struct RenderOptions {
  std::string thinking_mode = "thinking";  // "chat" | "thinking"
  nlohmann::ordered_json context = nlohmann::ordered_json::array();
  bool drop_thinking = true;
  bool add_default_bos_token = true;
  // null, or a level name ("low", "high", "xhigh", "max"), or (dsv41) an integer 1..100.
  nlohmann::ordered_json reasoning_effort;
  std::string reasoning_effort_profile = "preview";  // dsv4: "preview" | "official"
  bool return_multi_modal_data = false;              // dsv41
  // dsv41: false renders images as "[Unsupported Image]" (a served model without vision).
  bool vision = true;
};

// Reads `kwargs` as the Python function would bind them; an argument the version's
// encode_messages does not take is a TypeError, as in Python.
Result<RenderOptions> parse_encode_kwargs(Encoding e, const nlohmann::ordered_json& kwargs);

// Renders `messages` (a JSON array of role/content objects). Errors carry the reference
// encoder's exception as "<Class>: <message>".
Result<RenderedPrompt> encode_messages(Encoding e, const nlohmann::ordered_json& messages,
                                       const RenderOptions& options);

// Version entry points (encode_messages dispatches to these).
Result<RenderedPrompt> encode_messages_dsv32(const nlohmann::ordered_json& messages,
                                             const RenderOptions& options);
Result<RenderedPrompt> encode_messages_dsv4(const nlohmann::ordered_json& messages,
                                            const RenderOptions& options, bool v41);

}  // namespace di::recipe
