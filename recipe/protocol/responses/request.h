// OpenAI Responses request → ConversationRequest: input items, instructions, function /
// namespace / apply_patch tools, text.format. OpenAI-style 400s; unknown fields ignored.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

Result<ConversationRequest> parse_responses_request(const ordered_json& body,
                                                    const ConversionOptions& options);

}  // namespace di::recipe
