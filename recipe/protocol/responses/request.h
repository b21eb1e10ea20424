// OpenAI Responses request → ConversationRequest: input items, instructions, function /
// namespace / apply_patch tools, text.format. OpenAI-style 400s; unknown fields ignored.
#pragma once

#include "recipe/protocol/conversation.h"
#include "recipe/protocol/conversion_options.h"
#include "recipe/protocol/request_fields.h"

namespace di::recipe {

// Reads every top-level field of the request but "model" into `conv` and `io`: the Responses
// ReadFn that parse_request_fields (request_steps.h) calls after reading the model.
Status read_responses_fields(const Fields& top, const ConversionOptions& options, Conversation& conv,
                             InferenceOptions& io);

}  // namespace di::recipe
