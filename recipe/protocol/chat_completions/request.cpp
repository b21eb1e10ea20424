// Chat Completions request parsing: fields per OpenAI's API reference plus DeepSeek's
// extensions (reasoning_content on assistant turns, `thinking`, the latest_reminder role) and
// vLLM's sampling extras. Message rules: an assistant's tool calls are answered by the tool
// messages right after it, each id exactly once.
#include "recipe/protocol/chat_completions/request.h"

#include <map>
#include <set>

#include "recipe/protocol/request_steps.h"
#include "recipe/protocol/sampling_fields.h"
#include "recipe/protocol/tool_fields.h"

namespace di::recipe {
namespace {

constexpr Protocol kP = Protocol::kChatCompletions;

Status bad(const std::string& param, const std::string& msg) { return bad_param(kP, param, msg); }

ImageRef image_ref_from_url(const std::string& url, const std::string& detail) {
  ImageRef r;
  r.kind = url.rfind("data:", 0) == 0 ? ImageRef::Kind::kDataUrl : ImageRef::Kind::kUrl;
  r.url = url;
  r.detail = detail;
  if (r.kind == ImageRef::Kind::kDataUrl) {
    size_t semi = url.find_first_of(";,", 5);
    if (semi != std::string::npos) r.media_type = url.substr(5, semi - 5);
  }
  return r;
}

// Content of a message: a string, or an array of parts. `allow_images` for user messages.
Status read_content(const ordered_json& msg, const std::string& path, const std::string& role,
                    bool allow_images, std::vector<ContentPart>& out) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) return Status::ok();
  auto add_text = [&](std::string t) { out.push_back({ContentPart::Kind::kText, std::move(t), {}}); };
  auto part_path = [&](size_t i) { return path + ".content[" + std::to_string(i) + "]"; };
  return read_string_or_objects(kP, *it, path + ".content", "content parts", add_text, part_path,
                                [&](const Fields& f, size_t) -> Status {
    const std::string& pp = f.path();
    DI_ASSIGN_OR_RETURN(std::string type, f.required_str("type"));
    if (type == "text") {
      DI_ASSIGN_OR_RETURN(std::string text, f.required_str("text"));
      out.push_back({ContentPart::Kind::kText, std::move(text), {}});
    } else if (type == "image_url") {
      if (!allow_images) return bad(pp, "Image in " + role + " message is unsupported");
      const ordered_json* iu = f.get("image_url");
      std::string url, detail;
      if (iu != nullptr && iu->is_string()) {
        url = iu->get<std::string>();
      } else if (iu != nullptr && iu->is_object()) {
        Fields g(kP, *iu, pp + ".image_url");
        DI_ASSIGN_OR_RETURN(url, g.required_str("url"));
        DI_ASSIGN_OR_RETURN(auto d, g.one_of("detail", {"auto", "low", "high", "original"}));
        detail = d.value_or("");
      } else {
        return bad(pp + ".image_url", "required, expected an object {\"url\": ...}");
      }
      if (url.empty()) return bad(pp + ".image_url.url", "must not be empty");
      if (url.rfind("data:", 0) != 0 && url.find("base64,") == std::string::npos &&
          !(url.size() >= 4 && (url.compare(0, 4, "http") == 0 || url.compare(0, 4, "HTTP") == 0)))
        return bad(pp + ".image_url.url", "expected an http(s) URL or a base64 data URL");
      out.push_back({ContentPart::Kind::kImage, "", image_ref_from_url(url, detail)});
    } else if (type == "file") {
      const ordered_json* file = f.get("file");
      if (file != nullptr && file->is_object() && file->contains("file_id"))
        return bad(pp + ".file.file_id",
                   "file_id is not supported. Pass the file as a base64 data url instead.");
      out.push_back({ContentPart::Kind::kText, "[Unsupported Document]", {}});
    } else if (type == "refusal" && role == "assistant") {
      DI_ASSIGN_OR_RETURN(std::string text, f.required_str("refusal"));
      out.push_back({ContentPart::Kind::kText, std::move(text), {}});
    } else {
      return bad(pp + ".type", "unsupported content part type \"" + type + "\" in a " + role +
                                   " message");
    }
    return Status::ok();
  });
}

bool content_is_empty(const std::vector<ContentPart>& parts) {
  for (const auto& p : parts)
    if (p.kind != ContentPart::Kind::kText || !p.text.empty()) return false;
  return true;
}

Result<Message> read_message(const ordered_json& m, size_t i) {
  std::string path = "messages[" + std::to_string(i) + "]";
  if (!m.is_object()) return bad(path, "expected an object, got " + describe_json(m));
  Fields f(kP, m, path);
  DI_ASSIGN_OR_RETURN(std::string role, f.required_str("role"));
  Message msg;
  if (role == "system" || role == "developer") {
    msg.role = role == "system" ? Role::kSystem : Role::kDeveloper;
    DI_RETURN_IF_ERROR(read_content(m, path, role, false, msg.content));
  } else if (role == "user") {
    msg.role = Role::kUser;
    if (!f.has("content")) return f.error("content", "required");
    DI_RETURN_IF_ERROR(read_content(m, path, role, true, msg.content));
  } else if (role == "assistant") {
    msg.role = Role::kAssistant;
    DI_RETURN_IF_ERROR(read_content(m, path, role, false, msg.content));
    DI_ASSIGN_OR_RETURN(msg.reasoning_content, f.str("reasoning_content"));
    DI_ASSIGN_OR_RETURN(const ordered_json* calls, f.array("tool_calls"));
    if (calls != nullptr) {
      if (calls->empty()) return f.error("tool_calls", "must not be empty when present");
      for (size_t k = 0; k < calls->size(); ++k) {
        std::string cp = path + ".tool_calls[" + std::to_string(k) + "]";
        const ordered_json& c = (*calls)[k];
        if (!c.is_object()) return bad(cp, "expected an object, got " + describe_json(c));
        Fields cf(kP, c, cp);
        ToolCall call;
        DI_ASSIGN_OR_RETURN(call.id, cf.required_str("id"));
        if (call.id.empty()) return cf.error("id", "must not be empty");
        DI_ASSIGN_OR_RETURN(auto type, cf.one_of("type", {"function"}));
        DI_ASSIGN_OR_RETURN(const ordered_json* fn, cf.object("function"));
        if (fn == nullptr) return cf.error("function", "required, expected an object");
        Fields ff(kP, *fn, cp + ".function");
        DI_ASSIGN_OR_RETURN(call.name, ff.required_str("name"));
        DI_ASSIGN_OR_RETURN(call.arguments, ff.required_str("arguments"));
        ordered_json args;
        DI_RETURN_IF_ERROR(ff.json_string("arguments", call.arguments, &args));
        msg.tool_calls.push_back(std::move(call));
      }
    }
    if (content_is_empty(msg.content) && msg.tool_calls.empty() && !msg.reasoning_content)
      return bad(path, "an assistant message needs content or tool_calls");
  } else if (role == "tool") {
    msg.role = Role::kTool;
    DI_ASSIGN_OR_RETURN(msg.tool_call_id, f.required_str("tool_call_id"));
    DI_RETURN_IF_ERROR(read_content(m, path, role, false, msg.content));
  } else if (role == "latest_reminder") {
    msg.role = Role::kLatestReminder;
    DI_RETURN_IF_ERROR(read_content(m, path, role, false, msg.content));
  } else {
    return f.error("role", "expected one of \"system\", \"developer\", \"user\", \"assistant\", "
                           "\"tool\" or \"latest_reminder\", got \"" + role + "\"");
  }
  return msg;
}

// Every assistant tool call is answered by the tool messages right after it, each id once.
Status check_tool_pairing(const std::vector<Message>& msgs, const std::vector<size_t>& index) {
  std::set<std::string> pending;
  std::map<std::string, std::string> answered;  // id -> the tool message answering it, this turn
  size_t owner = 0;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Message& m = msgs[i];
    std::string path = "messages[" + std::to_string(index[i]) + "]";
    if (m.role == Role::kTool) {
      // A second answer to a call of this turn is named as such, not as a stray tool message.
      if (auto it = answered.find(m.tool_call_id); it != answered.end())
        return bad(path + ".tool_call_id",
                   "duplicate tool result for tool call \"" + m.tool_call_id + "\" of messages[" +
                       std::to_string(owner) + "], already answered by " + it->second);
      if (pending.empty())
        return bad(path, "a tool message must answer a tool call of the assistant message "
                         "before it (tool_call_id \"" + m.tool_call_id + "\")");
      if (pending.erase(m.tool_call_id) == 0)
        return bad(path + ".tool_call_id",
                   "\"" + m.tool_call_id + "\" does not answer an open tool call of messages[" +
                       std::to_string(owner) + "]");
      answered.emplace(m.tool_call_id, path);
      continue;
    }
    answered.clear();  // ids may be reused by a later turn's calls
    if (!pending.empty())
      return bad(path, "expected a tool message answering tool call \"" + *pending.begin() +
                           "\" of messages[" + std::to_string(owner) + "]");
    if (m.role == Role::kAssistant && !m.tool_calls.empty()) {
      owner = index[i];
      for (const auto& c : m.tool_calls) {
        if (!pending.insert(c.id).second)
          return bad(path + ".tool_calls", "tool call ids must be unique, \"" + c.id +
                                               "\" appears twice");
      }
    }
  }
  if (!pending.empty())
    return bad("messages", "tool call \"" + *pending.begin() + "\" of messages[" +
                               std::to_string(owner) + "] has no tool message answering it");
  return Status::ok();
}

}  // namespace

Status read_chat_completions_fields(const Fields& f, const ConversionOptions& options,
                                    Conversation& conv, InferenceOptions& io) {
  SamplingOptions& s = io.sampling;
  DI_ASSIGN_OR_RETURN(const ordered_json* msgs, f.array("messages"));
  if (msgs == nullptr) return f.error("messages", "required, expected an array of messages");
  if (msgs->empty()) return bad("messages", "Empty input messages");
  std::vector<size_t> index;
  for (size_t i = 0; i < msgs->size(); ++i) {
    DI_ASSIGN_OR_RETURN(Message m, read_message((*msgs)[i], i));
    // Empty system prompts carry nothing; dropping them keeps the rendered prompt canonical.
    if ((m.role == Role::kSystem || m.role == Role::kDeveloper) && content_is_empty(m.content))
      continue;
    conv.messages.push_back(std::move(m));
    index.push_back(i);
  }
  DI_RETURN_IF_ERROR(check_tool_pairing(conv.messages, index));

  // Limits and sampling.
  DI_ASSIGN_OR_RETURN(auto mct, f.integer("max_completion_tokens", 1, INT32_MAX));
  DI_ASSIGN_OR_RETURN(auto mt, f.integer("max_tokens", 1, INT32_MAX));
  s.max_tokens = mct ? mct : mt;
  DI_ASSIGN_OR_RETURN(s.temperature, f.number("temperature", 0, 2));
  DI_ASSIGN_OR_RETURN(s.top_p, f.number("top_p", 0, 1, true, false));
  DI_RETURN_IF_ERROR(read_stop(f, "stop", 16, false, s.stop));
  DI_RETURN_IF_ERROR(read_extra_sampling(f, s));

  DI_ASSIGN_OR_RETURN(auto stream, f.boolean("stream"));
  io.stream = stream.value_or(false);
  DI_ASSIGN_OR_RETURN(const ordered_json* so, f.object("stream_options"));
  io.include_usage = !io.stream;
  if (so != nullptr) {
    if (!io.stream)
      return f.error("stream_options", "only allowed when \"stream\" is true");
    Fields sf(kP, *so, "stream_options");
    DI_ASSIGN_OR_RETURN(auto iu, sf.boolean("include_usage"));
    io.include_usage = iu.value_or(false);
  }
  DI_ASSIGN_OR_RETURN(auto ptc, f.boolean("parallel_tool_calls"));
  io.parallel_tool_calls = ptc.value_or(true);
  DI_ASSIGN_OR_RETURN(auto user, f.str("user"));
  io.user = user.value_or("");

  // Tools.
  auto tool_path = [](size_t i) { return "tools[" + std::to_string(i) + "]"; };
  DI_RETURN_IF_ERROR(read_tools(f, tool_path, [&](const Fields& tf) -> Result<std::optional<ToolDefinition>> {
    DI_ASSIGN_OR_RETURN(auto type, tf.one_of("type", {"function"}));
    if (!type) return tf.error("type", "required, expected \"function\"");
    DI_ASSIGN_OR_RETURN(const ordered_json* fn, tf.object("function"));
    if (fn == nullptr) return tf.error("function", "required, expected an object");
    DI_ASSIGN_OR_RETURN(ToolDefinition def,
                        read_function_tool(Fields(kP, *fn, tf.path() + ".function"), "parameters", false));
    return std::optional<ToolDefinition>(std::move(def));
  }, conv.tools));
  const std::string expected =
      "\"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";
  DI_ASSIGN_OR_RETURN(const bool forced_tool, read_openai_tool_choice(f, expected, [&](const Fields& cf) -> Status {
    DI_ASSIGN_OR_RETURN(auto type, cf.one_of("type", {"function"}));
    DI_ASSIGN_OR_RETURN(const ordered_json* fn, cf.object("function"));
    if (fn == nullptr) return cf.error("function", "required, expected {\"name\": ...}");
    DI_ASSIGN_OR_RETURN(std::string name, Fields(kP, *fn, "tool_choice.function").required_str("name"));
    if (!narrow_to_tool(conv, [&](const ToolDefinition& t) { return t.name == name; }))
      return bad("tool_choice.function.name", "no tool named \"" + name + "\" in tools");
    return Status::ok();
  }, conv));

  // Thinking and effort.
  ThinkingChoice tc;
  DI_ASSIGN_OR_RETURN(tc.effort, f.one_of("reasoning_effort", {"none", "minimal", "low", "medium",
                                                               "high", "xhigh", "max"}));
  DI_RETURN_IF_ERROR(read_thinking_object(
      f, "required, expected \"enabled\", \"adaptive\" or \"disabled\"", tc, io));
  DI_RETURN_IF_ERROR(resolve_thinking_with_tool_choice(
      kP, tc, options.default_thinking, forced_tool,
      "thinking mode does not support a required or named tool_choice; disable thinking or use "
      "\"auto\"",
      conv));

  // Output format.
  DI_ASSIGN_OR_RETURN(const ordered_json* rf, f.object("response_format"));
  if (rf != nullptr) {
    Fields rff(kP, *rf, "response_format");
    DI_ASSIGN_OR_RETURN(auto type, rff.str("type"));
    if (!type) return rff.error("type", "required");
    if (*type == "text") {
    } else if (*type == "json_object") {
      bool found = false;
      for (const auto& m : conv.messages)
        for (const auto& p : m.content)
          if (p.kind == ContentPart::Kind::kText && mentions_json(p.text)) found = true;
      if (!found)
        return bad("messages", "'messages' must contain the word 'json' in some form, to use "
                               "'response_format' of type 'json_object'.");
      conv.response_format.type = ResponseFormat::Type::kJsonObject;
    } else if (*type == "json_schema") {
      DI_ASSIGN_OR_RETURN(const ordered_json* js, rff.object("json_schema"));
      if (js == nullptr) return rff.error("json_schema", "required, expected an object");
      Fields jf(kP, *js, "response_format.json_schema");
      DI_RETURN_IF_ERROR(read_json_schema_format(jf, /*schema_required=*/false, conv.response_format));
      DI_ASSIGN_OR_RETURN(auto desc, jf.str("description"));
      (void)desc;
    } else {
      return rff.error("type", "only \"text\", \"json_object\" and \"json_schema\" are supported, "
                               "got \"" + *type + "\"");
    }
  }
  return Status::ok();
}

}  // namespace di::recipe
