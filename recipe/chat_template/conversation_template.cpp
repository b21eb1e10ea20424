// Conversation → apply_chat_template variables → prompt.
#include "recipe/chat_template/conversation_template.h"

#include "recipe/encoding/tokens.h"

namespace di::recipe::chat_template {
namespace {

using nlohmann::ordered_json;

const char* role_name(Role r) {
  switch (r) {
    case Role::kSystem:
    case Role::kDeveloper:
    case Role::kLatestReminder: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
  }
  return "user";
}

std::string content_text(const std::vector<ContentPart>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) text += "\n\n";
    text += parts[i].kind == ContentPart::Kind::kText ? parts[i].text : std::string(tokens::kUnsupportedImage);
  }
  return text;
}

}  // namespace

ordered_json template_context(const ModelChatTemplate& t, const Conversation& conv) {
  ordered_json messages = ordered_json::array();
  for (const Message& m : conv.messages) {
    ordered_json j = {{"role", role_name(m.role)}, {"content", content_text(m.content)}};
    if (m.role == Role::kAssistant) {
      if (m.reasoning_content) j["reasoning_content"] = *m.reasoning_content;
      if (!m.tool_calls.empty()) {
        ordered_json calls = ordered_json::array();
        for (const ToolCall& c : m.tool_calls) {
          // Templates expect the arguments as a mapping (they tojson it); text that is not JSON
          // stays a string, which the Qwen templates write as it is.
          ordered_json args = ordered_json::parse(c.arguments, nullptr, false);
          if (args.is_discarded()) args = c.arguments;
          calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
        }
        j["tool_calls"] = std::move(calls);
      }
    }
    if (m.role == Role::kTool && !m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
    messages.push_back(std::move(j));
  }
  ordered_json tools = nullptr;
  if (!conv.tools.empty() && conv.tool_choice != ToolChoiceMode::kNone) {
    tools = ordered_json::array();
    for (const ToolDefinition& d : conv.tools) {
      ordered_json f = {{"name", d.name}};
      if (d.description) f["description"] = *d.description;
      if (d.has_parameters) f["parameters"] = d.parameters;
      tools.push_back({{"type", "function"}, {"function", std::move(f)}});
    }
  }
  ordered_json ctx = {{"messages", std::move(messages)},
                      {"tools", std::move(tools)},
                      {"add_generation_prompt", true},
                      {"enable_thinking", conv.thinking}};
  if (t.bos_token) ctx["bos_token"] = *t.bos_token;
  if (t.eos_token) ctx["eos_token"] = *t.eos_token;
  return ctx;
}

Result<ConversationPrompt> render_with_template(const ModelChatTemplate& t, const Conversation& conv) {
  auto text = t.chat_template.render(template_context(t, conv));
  if (!text.is_ok()) return Status(text.status().code(), t.origin + ": " + text.status().message());
  ConversationPrompt out;
  out.prompt.tmpl(*text);
  const std::string& s = *text;
  const size_t open = s.rfind("<think>");
  out.opened_thinking = open != std::string::npos && s.find("</think>", open) == std::string::npos;
  return out;
}

}  // namespace di::recipe::chat_template
