// Renders a normalized Conversation with a model's own chat template: the messages, tools and
// flags transformers' apply_chat_template passes (OpenAI-shaped messages with tool_calls whose
// arguments are objects, tools as {"type": "function", "function": {...}}, add_generation_prompt,
// enable_thinking, bos_token / eos_token).
#pragma once

#include "recipe/chat_template/model_chat_template.h"
#include "recipe/encoding/conversation_render.h"
#include "recipe/protocol/conversation.h"

namespace di::recipe::chat_template {

// The template's variables for `conv` (exposed for tests and `deepinfer render`).
nlohmann::ordered_json template_context(const ModelChatTemplate& t, const Conversation& conv);

// The prompt is one template segment: as in transformers, control tokens in it are recognised
// wherever they appear (the template mixes content into its text). opened_thinking is set when
// the prompt ends inside "<think>".
Result<ConversationPrompt> render_with_template(const ModelChatTemplate& t, const Conversation& conv);

}  // namespace di::recipe::chat_template
