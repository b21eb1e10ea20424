// protocol_name and parse_protocol: see protocol.h.
#include "recipe/protocol/protocol.h"

#include <string>

namespace di::recipe {

std::string_view protocol_name(Protocol protocol) {
  switch (protocol) {
    case Protocol::kChatCompletions: return "chat";
    case Protocol::kResponses: return "responses";
    case Protocol::kMessages: return "messages";
  }
  return "chat";
}

Result<Protocol> parse_protocol(std::string_view name) {
  if (name == "chat" || name == "chat_completions") return Protocol::kChatCompletions;
  if (name == "responses") return Protocol::kResponses;
  if (name == "messages" || name == "anthropic") return Protocol::kMessages;
  return Status::invalid_argument("protocol: expected \"chat\", \"responses\" or \"messages\", got \"" +
                                  std::string(name) + "\"");
}

}  // namespace di::recipe
