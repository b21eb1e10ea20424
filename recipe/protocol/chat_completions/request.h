// OpenAI Chat Completions request → ConversationRequest. Validates every field it reads and
// answers with OpenAI-style 400s; unknown fields are ignored as OpenAI ignores them.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

Result<ConversationRequest> parse_chat_completions_request(const ordered_json& body,
                                                           const ConversionOptions& options);

}  // namespace di::recipe
