// Protocol: the three request APIs the recipe speaks, and their names as the C ABI and the CLI
// take them. Its own header so that code naming a protocol need not pull in error bodies.
#pragma once

#include <string_view>

#include "base/status.h"

namespace di::recipe {

enum class Protocol { kChatCompletions, kResponses, kMessages };

// "chat", "responses", "messages" (the names the C ABI and the CLI take).
std::string_view protocol_name(Protocol protocol);
// Accepts the names above plus "chat_completions" and "anthropic".
Result<Protocol> parse_protocol(std::string_view name);

}  // namespace di::recipe
