// Conversation → reference-encoder messages → prompt. Where the public deepseek-recipe renders
// differently from DeepSeek's reference encoders (history reasoning, tool-result layout, effort
// texts), the reference encoders win; deepseek-recipe behaviour kept on top of them: a required
// tool_choice pre-opens the DSML block after the generation prefix.
#include "recipe/encoding/conversation_render.h"

#include "recipe/encoding/tokens.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

const char* role_name(Role r) {
  switch (r) {
    case Role::kSystem: return "system";
    // OpenAI's developer role is its system prompt; the reference encoders' "developer" (a user
    // turn that drop_thinking discards) would lose it in thinking mode.
    case Role::kDeveloper: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
    case Role::kLatestReminder: return "latest_reminder";
  }
  return "user";
}

// A message's content: a string, or (V4.1 with vision and images) a list of blocks.
ordered_json content_json(const std::vector<ContentPart>& parts, bool image_blocks,
                          std::vector<ImageRef>& images) {
  bool has_image = false;
  for (const auto& p : parts) has_image |= p.kind == ContentPart::Kind::kImage;
  if (!has_image || !image_blocks) {
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) text += "\n\n";
      text += parts[i].kind == ContentPart::Kind::kText ? parts[i].text
                                                        : std::string(tokens::kUnsupportedImage);
    }
    return text;
  }
  ordered_json blocks = ordered_json::array();
  for (const auto& p : parts) {
    if (p.kind == ContentPart::Kind::kText) {
      blocks.push_back({{"type", "text"}, {"text", p.text}});
    } else {
      const std::string& url = p.image.kind == ImageRef::Kind::kBase64
                                   ? "data:" + p.image.media_type + ";base64," + p.image.data
                                   : p.image.url;
      blocks.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
      images.push_back(p.image);
    }
  }
  return blocks;
}

const char* effort_word(ReasoningEffort e, Encoding enc) {
  switch (e) {
    case ReasoningEffort::kLow: return "low";
    case ReasoningEffort::kHigh: return "high";
    // V4's reference knows low/high/max only; DeepSeek's hosted API also maps xhigh to max.
    case ReasoningEffort::kXhigh: return enc == Encoding::kDsv41 ? "xhigh" : "max";
    case ReasoningEffort::kMax: return "max";
  }
  return "high";
}

EncoderCall build_call(const Conversation& conv, Encoding enc, bool vision,
                       std::vector<ImageRef>& images) {
  EncoderCall call;
  ordered_json& msgs = call.messages = ordered_json::array();
  const bool image_blocks = vision && enc == Encoding::kDsv41;
  // Consecutive user messages are one turn (content joined by "\n\n"), which the V4 encoders do
  // themselves and V3.2's does not.
  std::vector<Message> merged;
  for (const Message& m : conv.messages) {
    if (m.role == Role::kUser && !merged.empty() && merged.back().role == Role::kUser) {
      merged.back().content.insert(merged.back().content.end(), m.content.begin(), m.content.end());
    } else {
      merged.push_back(m);
    }
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    const Message& m = merged[i];
    ordered_json j{{"role", role_name(m.role)}};
    j["content"] = content_json(m.content, image_blocks && (m.role == Role::kUser), images);
    if (m.role == Role::kAssistant) {
      if (m.content.empty()) j["content"] = nullptr;
      if (m.reasoning_content) j["reasoning_content"] = *m.reasoning_content;
      if (!m.tool_calls.empty()) {
        ordered_json calls = ordered_json::array();
        for (const auto& c : m.tool_calls)
          calls.push_back({{"id", c.id}, {"type", "function"},
                           {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
        j["tool_calls"] = std::move(calls);
      }
      // A trailing assistant turn is a prefill: the model continues it, so no end token.
      if (i + 1 == merged.size()) j["wo_eos"] = true;
    }
    if (m.role == Role::kTool) j["tool_call_id"] = m.tool_call_id;
    msgs.push_back(std::move(j));
  }

  const bool has_tools = conv.tool_choice != ToolChoiceMode::kNone && !conv.tools.empty();
  const bool json_format = conv.response_format.type != ResponseFormat::Type::kText;
  if (has_tools || json_format) {
    if (msgs.empty() || msgs[0]["role"] != "system")
      msgs.insert(msgs.begin(), ordered_json{{"role", "system"}, {"content", ""}});
    ordered_json& sys = msgs[0];
    if (has_tools) {
      ordered_json tools = ordered_json::array();
      for (const auto& t : conv.tools) {
        ordered_json fn{{"name", t.name}};
        if (t.description) fn["description"] = *t.description;
        if (t.has_parameters) fn["parameters"] = t.parameters;
        tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
      }
      sys["tools"] = std::move(tools);
    }
    if (conv.response_format.type == ResponseFormat::Type::kJsonObject) {
      sys["response_format"] = {{"type", "json_object"}};
    } else if (conv.response_format.type == ResponseFormat::Type::kJsonSchema) {
      sys["response_format"] = {{"type", "json_schema"},
                                {"json_schema", {{"name", conv.response_format.name},
                                                 {"strict", conv.response_format.strict},
                                                 {"schema", conv.response_format.schema}}}};
    }
  }

  RenderOptions& o = call.options;
  o.thinking_mode = conv.thinking ? "thinking" : "chat";
  if (enc == Encoding::kDsv4) o.reasoning_effort_profile = "official";
  if (enc != Encoding::kDsv32 && conv.thinking && conv.reasoning_effort)
    o.reasoning_effort = effort_word(*conv.reasoning_effort, enc);
  o.vision = vision;
  return call;
}

}  // namespace

EncoderCall conversation_to_encoder_call(const Conversation& conv, Encoding encoding, bool vision) {
  std::vector<ImageRef> images;
  return build_call(conv, encoding, vision, images);
}

Result<ConversationPrompt> render_conversation(const Conversation& conv, Encoding encoding,
                                               bool vision) {
  ConversationPrompt out;
  EncoderCall call = build_call(conv, encoding, vision, out.images);
  auto rendered = encode_messages(encoding, call.messages, call.options);
  if (!rendered.is_ok()) {
    // The reference encoders' own checks (e.g. V3.2 wants reasoning on a thinking-mode prefill).
    return Status::invalid_argument("the conversation cannot be rendered as a " +
                                    std::string(encoding_name(encoding)) + " prompt: " +
                                    rendered.status().message());
  }
  out.prompt = std::move(rendered).value();
  const bool prefill = !conv.messages.empty() && conv.messages.back().role == Role::kAssistant;
  out.opened_thinking = conv.thinking && !prefill;
  if (conv.tool_choice == ToolChoiceMode::kRequired && !conv.tools.empty() && !prefill) {
    const char* block = encoding == Encoding::kDsv32 ? "function_calls"
                        : encoding == Encoding::kDsv41 ? " calls" : "tool_calls";
    out.prompt.tmpl("\n\n<" + std::string(tokens::kDsml) + block + ">\n");
    out.opened_tool_calls = true;
  }
  return out;
}

}  // namespace di::recipe
