// Anthropic Messages request → ConversationRequest. Validates every field it reads and answers
// with Anthropic-style 400s; unknown fields are ignored as Anthropic ignores them.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

// Reads every top-level field of the request but "model" into `conv` and `io`: the Messages
// ReadFn that parse_request_fields (request_steps.h) calls after reading the model.
Status read_messages_fields(const Fields& top, const ConversionOptions& options, Conversation& conv,
                            InferenceOptions& io);

}  // namespace di::recipe
