// protocol_name and parse_protocol: see protocol.h.
#include "recipe/protocol/protocol.h"

#include "base/enum_names.h"

namespace di::recipe {
namespace {

constexpr EnumName<Protocol> kProtocolNames[] = {{Protocol::kChatCompletions, "chat"},
                                                 {Protocol::kResponses, "responses"},
                                                 {Protocol::kMessages, "messages"}};

}  // namespace

std::string_view protocol_name(Protocol protocol) {
  return name_of(kProtocolNames, protocol, "chat");
}

Result<Protocol> parse_protocol(std::string_view name) {
  // The APIs' own names, accepted beside ours but never listed.
  if (name == "chat_completions") return Protocol::kChatCompletions;
  if (name == "anthropic") return Protocol::kMessages;
  return parse_enum(kProtocolNames, name, "protocol");
}

}  // namespace di::recipe
