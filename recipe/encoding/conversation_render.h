// Renders a normalized Conversation with one of DeepSeek's prompt formats: builds the message
// list the reference encoders take (tools and response format on the first system message,
// images as placeholders or "[Unsupported Image]") and runs the version's encoder.
#pragma once

#include <vector>

#include "recipe/encoding/encoder.h"
#include "recipe/encoding/prompt.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe {

struct ConversationPrompt {
  RenderedPrompt prompt;
  std::vector<ImageRef> images;       // placeholders' images, in prompt order (vision only)
  bool opened_thinking = false;       // the prompt ends inside <think>
  bool opened_tool_calls = false;     // the prompt ends with an opened DSML block
};

// `vision`: V4.1 renders images as its image placeholder (and returns them); otherwise an image
// is the text "[Unsupported Image]".
Result<ConversationPrompt> render_conversation(const Conversation& conv, Encoding encoding,
                                               bool vision);

// The message list and keyword arguments render_conversation passes to the encoder (exposed so
// tests and `deepinfer render` can show what a request became).
struct EncoderCall {
  nlohmann::ordered_json messages;
  RenderOptions options;
};
EncoderCall conversation_to_encoder_call(const Conversation& conv, Encoding encoding, bool vision);

}  // namespace di::recipe
