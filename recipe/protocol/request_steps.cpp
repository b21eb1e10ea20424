// The request parsers' shared steps (see the header).
#include "recipe/protocol/request_steps.h"

#include "recipe/protocol/tool_fields.h"

namespace di::recipe {

Status bad_param(Protocol protocol, const std::string& param, const std::string& message) {
  return ApiError::bad_request(protocol, param, param.empty() ? message : param + ": " + message)
      .to_status();
}

std::string block_type(const ordered_json& block) {
  auto it = block.find("type");
  return it != block.end() && it->is_string() ? it->get<std::string>() : "";
}

namespace {

// DeepSeek's request converters answer 400 when the recipe's image placeholder is typed anywhere
// in input text (their prompts find images by it). Our renderer places images structurally, so
// the text would be harmless here; the check keeps requests accepted exactly where DeepSeek's are.
constexpr std::string_view kImagePlaceholder = "<｜image｜>";

bool has_placeholder(std::string_view text) { return text.find(kImagePlaceholder) != std::string_view::npos; }

Status reject_placeholder(Protocol protocol, const std::string& param, const std::string& where) {
  return bad_param(protocol, param,
                   "the text " + std::string(kImagePlaceholder) + " is reserved for images and may not appear in " +
                       where + "; send images as image content blocks");
}

Status check_no_image_placeholder(Protocol protocol, const Conversation& conv) {
  const std::string input = protocol == Protocol::kResponses ? "input" : "messages";
  for (size_t i = 0; i < conv.messages.size(); ++i) {
    const Message& m = conv.messages[i];
    const std::string where = "message " + std::to_string(i) + " of the conversation";
    for (const ContentPart& part : m.content) {
      if (part.kind == ContentPart::Kind::kText && has_placeholder(part.text)) {
        return reject_placeholder(protocol, input, "the text of " + where);
      }
    }
    if (m.reasoning_content && has_placeholder(*m.reasoning_content)) {
      return reject_placeholder(protocol, input, "the reasoning of " + where);
    }
    for (const ToolCall& call : m.tool_calls) {
      if (has_placeholder(call.name) || has_placeholder(call.arguments)) {
        return reject_placeholder(protocol, input, "a tool call of " + where);
      }
    }
  }
  for (const ToolDefinition& tool : conv.tools) {
    if (has_placeholder(tool.name) || (tool.description && has_placeholder(*tool.description)) ||
        has_placeholder(tool.parameters.dump())) {
      return reject_placeholder(protocol, "tools", "a tool definition");
    }
  }
  return Status::ok();
}

}  // namespace

Result<ConversationRequest> parse_request_fields(Protocol protocol, const ordered_json& body,
                                                 const ConversionOptions& options, ReadFn read) {
  const Fields top(protocol, body, "");
  ConversationRequest req;
  DI_ASSIGN_OR_RETURN(req.model, top.required_str("model"));
  DI_RETURN_IF_ERROR(read(top, options, req.conversation, req.options));
  DI_RETURN_IF_ERROR(check_no_image_placeholder(protocol, req.conversation));
  return req;
}

Status read_tools(const Fields& top, const std::function<std::string(size_t)>& path_of,
                  const ToolFn& read, std::vector<ToolDefinition>& tools) {
  DI_ASSIGN_OR_RETURN(const ordered_json* array, top.array("tools"));
  if (array == nullptr) return Status::ok();
  DI_RETURN_IF_ERROR(for_each_object(top.protocol(), *array, path_of,
                                     [&](const Fields& f, size_t) -> Status {
                                       DI_ASSIGN_OR_RETURN(auto tool, read(f));
                                       if (tool) tools.push_back(std::move(*tool));
                                       return Status::ok();
                                     }));
  return check_unique_tool_names(top, "tools", tools);
}

Result<bool> read_openai_tool_choice(const Fields& top, const std::string& expected,
                                     const std::function<Status(const Fields& choice)>& read_object,
                                     Conversation& conv) {
  const ordered_json* tc = top.get("tool_choice");
  if (tc == nullptr) return false;
  if (tc->is_string()) {
    DI_ASSIGN_OR_RETURN(auto mode, top.one_of("tool_choice", {"none", "auto", "required"}));
    conv.tool_choice = tool_choice_mode(*mode);
  } else if (tc->is_object()) {
    DI_RETURN_IF_ERROR(read_object(Fields(top.protocol(), *tc, "tool_choice")));
  } else {
    return bad_param(top.protocol(), "tool_choice", "expected " + expected + ", got " + describe_json(*tc));
  }
  if (conv.tool_choice == ToolChoiceMode::kRequired && conv.tools.empty())
    return bad_param(top.protocol(), "tool_choice", "\"required\" needs at least one tool in tools");
  return conv.tool_choice == ToolChoiceMode::kRequired;
}

Status for_each_object(Protocol protocol, const ordered_json& array,
                       const std::function<std::string(size_t)>& path_of, const ElementFn& fn) {
  for (size_t i = 0; i < array.size(); ++i) {
    const ordered_json& e = array[i];
    const std::string path = path_of(i);
    if (!e.is_object()) return bad_param(protocol, path, "expected an object, got " + describe_json(e));
    DI_RETURN_IF_ERROR(fn(Fields(protocol, e, path), i));
  }
  return Status::ok();
}

Status read_string_or_objects(Protocol protocol, const ordered_json& content,
                              const std::string& param, const std::string& elements,
                              const std::function<void(std::string)>& on_string,
                              const std::function<std::string(size_t)>& path_of,
                              const ElementFn& on_element) {
  if (content.is_string()) {
    on_string(content.get<std::string>());
    return Status::ok();
  }
  if (!content.is_array())
    return bad_param(protocol, param, "expected a string or an array of " + elements + ", got " +
                                          describe_json(content));
  return for_each_object(protocol, content, path_of, on_element);
}

Status read_thinking_object(const Fields& top, const std::string& missing_type, ThinkingChoice& c,
                            InferenceOptions& io) {
  DI_ASSIGN_OR_RETURN(const ordered_json* th, top.object("thinking"));
  if (th == nullptr) return Status::ok();
  Fields tf(top.protocol(), *th, "thinking");
  DI_ASSIGN_OR_RETURN(auto type, tf.one_of("type", {"enabled", "adaptive", "disabled"}));
  if (!type) return tf.error("type", missing_type);
  c.explicit_switch = *type != "disabled";
  DI_ASSIGN_OR_RETURN(io.thinking_budget_tokens, tf.integer("budget_tokens", 1, INT32_MAX));
  return Status::ok();
}

Status resolve_thinking_with_tool_choice(Protocol protocol, const ThinkingChoice& c,
                                         bool default_thinking, bool forced_tool,
                                         const std::string& conflict_message, Conversation& conv) {
  const bool explicit_on = resolve_thinking(c, default_thinking, conv);
  if (forced_tool && conv.thinking) {
    if (explicit_on) return bad_param(protocol, "tool_choice", conflict_message);
    conv.thinking = false;  // the default gives way to an explicit tool choice
    conv.reasoning_effort.reset();
  }
  return Status::ok();
}

bool narrow_to_tool(Conversation& conv, const std::function<bool(const ToolDefinition&)>& keep) {
  std::vector<ToolDefinition> kept;
  for (const ToolDefinition& t : conv.tools)
    if (keep(t)) kept.push_back(t);
  if (kept.empty()) return false;
  conv.tools = std::move(kept);
  conv.tool_choice = ToolChoiceMode::kRequired;
  return true;
}

ToolChoiceMode tool_choice_mode(const std::string& word) {
  if (word == "none") return ToolChoiceMode::kNone;
  if (word == "required") return ToolChoiceMode::kRequired;
  return ToolChoiceMode::kAuto;
}

Status read_json_schema_format(const Fields& f, bool schema_required, ResponseFormat& out) {
  out.type = ResponseFormat::Type::kJsonSchema;
  DI_ASSIGN_OR_RETURN(out.name, f.required_str("name"));
  if (!valid_tool_name(out.name) || out.name.size() > 64)
    return f.error("name", "expected 1 to 64 characters of a-z, A-Z, 0-9, '_' or '-', got \"" +
                               out.name + "\"");
  DI_ASSIGN_OR_RETURN(const ordered_json* schema, f.object("schema"));
  if (schema == nullptr && schema_required)
    return f.error("schema", "required, expected a JSON Schema object");
  out.schema = schema != nullptr ? *schema : ordered_json::object();
  DI_ASSIGN_OR_RETURN(auto strict, f.boolean("strict"));
  out.strict = strict.value_or(false);
  return Status::ok();
}

}  // namespace di::recipe
