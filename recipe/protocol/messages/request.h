// Anthropic Messages request → ConversationRequest. Validates every field it reads and answers
// with Anthropic-style 400s; unknown fields are ignored as Anthropic ignores them.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

Result<ConversationRequest> parse_messages_request(const ordered_json& body,
                                                   const ConversionOptions& options);

}  // namespace di::recipe
