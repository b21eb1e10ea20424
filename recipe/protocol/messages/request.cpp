// Anthropic Messages request parsing: fields per Anthropic's API reference; content blocks map
// onto the Conversation (text → user text, tool_result → tool message, tool_use → tool call,
// thinking → reasoning). tool_use ids must be answered by the next user message's tool_result
// blocks, with Anthropic's own error wording.
#include "recipe/protocol/messages/request.h"

#include <map>
#include <set>

#include "recipe/encoding/py_json.h"
#include "recipe/image/base64.h"
#include "recipe/protocol/request_steps.h"
#include "recipe/protocol/sampling_fields.h"
#include "recipe/protocol/tool_fields.h"

namespace di::recipe {
namespace {

constexpr Protocol kP = Protocol::kMessages;

Status bad(const std::string& param, const std::string& msg) { return bad_param(kP, param, msg); }

// Anthropic params name array elements with dots: "messages.2.content.0".
std::function<std::string(size_t)> dotted(const std::string& prefix) {
  return [prefix](size_t i) { return prefix + "." + std::to_string(i); };
}

// A message's content: a string goes to on_string; each block of a non-empty array, with its
// type, to on_block; anything else is a 400.
using BlockFn = std::function<Status(const Fields& block, const std::string& type)>;
Status read_message_content(const ordered_json& content, const std::string& path,
                            const std::function<void(std::string)>& on_string,
                            const BlockFn& on_block) {
  if (content.is_array() && content.empty())
    return bad(path + ".content", "messages must have non-empty content");
  return read_string_or_objects(
      kP, content, path + ".content", "content blocks", on_string, dotted(path + ".content"),
      [&](const Fields& f, size_t) { return on_block(f, block_type(f.json())); });
}

// tool_use ids of messages[message] that no tool_result answered.
Status unanswered_tool_uses(size_t message, const std::string& ids) {
  return bad("messages." + std::to_string(message),
             "`tool_use` ids were found without `tool_result` blocks immediately after: " + ids +
                 ". Each `tool_use` block must have a corresponding `tool_result` block in the "
                 "next message.");
}

Result<ImageRef> read_image(const ordered_json& block, const std::string& path) {
  Fields f(kP, block, path);
  DI_ASSIGN_OR_RETURN(const ordered_json* src, f.object("source"));
  if (src == nullptr) return f.error("source", "Field required");
  Fields sf(kP, *src, path + ".source");
  DI_ASSIGN_OR_RETURN(std::string type, sf.required_str("type"));
  ImageRef r;
  if (type == "base64") {
    r.kind = ImageRef::Kind::kBase64;
    DI_ASSIGN_OR_RETURN(r.media_type, sf.required_str("media_type"));
    DI_ASSIGN_OR_RETURN(r.data, sf.required_str("data"));
    static const std::set<std::string> kTypes = {"image/jpeg", "image/jpg", "image/png",
                                                 "image/gif", "image/webp"};
    if (!kTypes.count(r.media_type))
      return sf.error("media_type", "expected one of \"image/jpeg\", \"image/png\", \"image/gif\" "
                                    "or \"image/webp\", got \"" + r.media_type + "\"");
    if (r.data.empty()) return sf.error("data", "must not be empty");
    // Rejected here whatever the image policy, as the recipe's converter does (recipe-spec §6.3).
    if (std::string problem = image::base64_problem(r.data); !problem.empty())
      return sf.error("data", problem);
  } else if (type == "url") {
    r.kind = ImageRef::Kind::kUrl;
    DI_ASSIGN_OR_RETURN(r.url, sf.required_str("url"));
    if (r.url.size() < 4 || (r.url.compare(0, 4, "http") != 0 && r.url.compare(0, 4, "HTTP") != 0))
      return sf.error("url", "expected an http(s) URL");
  } else if (type == "file") {
    return sf.error("type", "file sources are not supported. Pass the image as base64 data instead.");
  } else {
    return sf.error("type", "expected \"base64\" or \"url\", got \"" + type + "\"");
  }
  return r;
}

// Text (and images, where allowed) of a tool_result's content.
Status read_tool_result_content(const ordered_json& block, const std::string& path,
                                std::vector<ContentPart>& out) {
  auto it = block.find("content");
  if (it == block.end() || it->is_null()) return Status::ok();
  auto add_text = [&](std::string t) { out.push_back({ContentPart::Kind::kText, std::move(t), {}}); };
  return read_string_or_objects(kP, *it, path + ".content", "content blocks", add_text,
                                dotted(path + ".content"), [&](const Fields& f, size_t) -> Status {
    const std::string type = block_type(f.json());
    const std::string& bp = f.path();
    if (type == "text") {
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("text"));
      out.push_back({ContentPart::Kind::kText, std::move(t), {}});
    } else if (type == "image") {
      DI_ASSIGN_OR_RETURN(ImageRef r, read_image(f.json(), bp));
      out.push_back({ContentPart::Kind::kImage, "", std::move(r)});
    } else if (type == "document") {
      out.push_back({ContentPart::Kind::kText, "[Unsupported Document]", {}});
    } else {
      return bad(bp + ".type", "unsupported block type \"" + type + "\" in a tool_result");
    }
    return Status::ok();
  });
}

struct PendingUses {
  std::vector<std::string> ids;  // in order
  size_t message = 0;
};

Status read_user(const ordered_json& content, const std::string& path, Conversation& conv,
                 PendingUses& pending) {
  std::set<std::string> open(pending.ids.begin(), pending.ids.end());
  std::map<std::string, std::string> answered;  // tool_use id -> the tool_result block answering it
  auto text = [&](std::string t) {
    Message m;
    m.role = Role::kUser;
    m.content.push_back({ContentPart::Kind::kText, std::move(t), {}});
    conv.messages.push_back(std::move(m));
  };
  DI_RETURN_IF_ERROR(read_message_content(content, path, text, [&](const Fields& f, const std::string& type) -> Status {
    const ordered_json& b = f.json();
    const std::string bp = f.path();
    if (type == "text") {
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("text"));
      text(std::move(t));
    } else if (type == "image") {
      DI_ASSIGN_OR_RETURN(ImageRef r, read_image(b, bp));
      Message m;
      m.role = Role::kUser;
      m.content.push_back({ContentPart::Kind::kImage, "", std::move(r)});
      conv.messages.push_back(std::move(m));
    } else if (type == "document") {
      text("[Unsupported Document]");
    } else if (type == "tool_result") {
      Message m;
      m.role = Role::kTool;
      DI_ASSIGN_OR_RETURN(m.tool_call_id, f.required_str("tool_use_id"));
      DI_ASSIGN_OR_RETURN(auto is_error, f.boolean("is_error"));
      (void)is_error;
      if (auto a = answered.find(m.tool_call_id); a != answered.end())
        return bad(bp + ".tool_use_id",
                   "each tool_use must have a single result. Found multiple `tool_result` blocks "
                   "with id: " + m.tool_call_id + " (already answered by " + a->second + ")");
      if (!open.count(m.tool_call_id))
        return bad(bp, "unexpected `tool_use_id` found in `tool_result` blocks: " + m.tool_call_id +
                           ". Each `tool_result` block must have a corresponding `tool_use` block "
                           "in the previous message.");
      open.erase(m.tool_call_id);
      answered.emplace(m.tool_call_id, bp);
      DI_RETURN_IF_ERROR(read_tool_result_content(b, bp, m.content));
      conv.messages.push_back(std::move(m));
    } else if (type == "tool_use" || type == "thinking" || type == "redacted_thinking" ||
               type == "server_tool_use") {
      return bad(bp + ".type", "`" + type + "` blocks are only allowed in assistant messages");
    } else {
      return bad(bp + ".type", "unsupported content block type \"" + type + "\"");
    }
    return Status::ok();
  }));
  if (!open.empty()) {
    std::string ids;
    for (const auto& id : pending.ids)
      if (open.count(id)) ids += (ids.empty() ? "" : ", ") + id;
    return unanswered_tool_uses(pending.message, ids);
  }
  pending.ids.clear();
  return Status::ok();
}

Status read_assistant(const ordered_json& content, const std::string& path, size_t index,
                      Conversation& conv, PendingUses& pending, const ConversionOptions& opts) {
  Message m;
  m.role = Role::kAssistant;
  std::string text, reasoning;
  bool has_text = false, has_reasoning = false;
  std::set<std::string> ids;
  auto whole_text = [&](std::string t) {
    text = std::move(t);
    has_text = true;
  };
  DI_RETURN_IF_ERROR(read_message_content(content, path, whole_text, [&](const Fields& f, const std::string& type) -> Status {
    const std::string bp = f.path();
    if (type == "text") {
      if (!m.tool_calls.empty())
        return bad(bp, "text after a tool_use block is not supported in an assistant message");
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("text"));
      if (has_text) text += "\n\n";
      text += t;
      has_text = true;
    } else if (type == "thinking") {
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("thinking"));
      if (has_reasoning) reasoning += "\n\n";
      reasoning += t;
      has_reasoning = true;
    } else if (type == "redacted_thinking") {
      // Encrypted by another provider; nothing the model can read.
    } else if (type == "tool_use") {
      ToolCall c;
      DI_ASSIGN_OR_RETURN(c.id, f.required_str("id"));
      if (c.id.empty()) return f.error("id", "must not be empty");
      if (!ids.insert(c.id).second)
        return f.error("id", "`tool_use` ids must be unique, \"" + c.id + "\" appears twice");
      DI_ASSIGN_OR_RETURN(c.name, f.required_str("name"));
      DI_ASSIGN_OR_RETURN(const ordered_json* input, f.object("input"));
      c.arguments = py_json_dumps(input != nullptr ? *input : ordered_json::object());
      m.tool_calls.push_back(std::move(c));
    } else if (type == "server_tool_use" || type == "web_search_tool_result") {
      if (!opts.ignore_server_tools)
        return bad(bp + ".type", "server tools are not supported");
    } else if (type == "document") {
      if (has_text) text += "\n\n";
      text += "[Unsupported Document]";
      has_text = true;
    } else if (type == "image") {
      return bad(bp, "Image in assistant message is unsupported");
    } else {
      return bad(bp + ".type", "unsupported content block type \"" + type + "\"");
    }
    return Status::ok();
  }));
  if (has_text) m.content.push_back({ContentPart::Kind::kText, std::move(text), {}});
  if (has_reasoning) m.reasoning_content = std::move(reasoning);
  pending.ids.clear();
  for (const auto& c : m.tool_calls) pending.ids.push_back(c.id);
  pending.message = index;
  conv.messages.push_back(std::move(m));
  return Status::ok();
}

}  // namespace

Status read_messages_fields(const Fields& f, const ConversionOptions& options, Conversation& conv,
                            InferenceOptions& io) {
  SamplingOptions& s = io.sampling;
  DI_ASSIGN_OR_RETURN(s.max_tokens, f.integer("max_tokens", 1, INT32_MAX));
  DI_ASSIGN_OR_RETURN(s.temperature, f.number("temperature", 0, 1));
  DI_ASSIGN_OR_RETURN(s.top_p, f.number("top_p", 0, 1, true, false));
  DI_ASSIGN_OR_RETURN(s.top_k, f.integer("top_k", 0, INT32_MAX));
  DI_RETURN_IF_ERROR(read_stop(f, "stop_sequences", 16, true, s.stop));
  if (f.has("stop_sequences") && !f.get("stop_sequences")->is_array())
    return f.error("stop_sequences", "expected an array of strings");
  DI_RETURN_IF_ERROR(read_extra_sampling(f, s));
  DI_ASSIGN_OR_RETURN(auto stream, f.boolean("stream"));
  io.stream = stream.value_or(false);
  io.include_usage = true;
  DI_ASSIGN_OR_RETURN(const ordered_json* md, f.object("metadata"));
  if (md != nullptr) {
    DI_ASSIGN_OR_RETURN(auto uid, Fields(kP, *md, "metadata").str("user_id"));
    io.user = uid.value_or("");
  }

  // System prompt: a string or text blocks.
  if (const ordered_json* sys = f.get("system")) {
    Message m;
    m.role = Role::kSystem;
    if (sys->is_string()) {
      m.content.push_back({ContentPart::Kind::kText, sys->get<std::string>(), {}});
    } else if (sys->is_array()) {
      std::string text;
      DI_RETURN_IF_ERROR(for_each_object(kP, *sys, dotted("system"), [&](const Fields& bf, size_t i) -> Status {
        const std::string type = block_type(bf.json());
        if (type == "image") return bad(bf.path(), "Image in system message is unsupported");
        if (type != "text") return bad(bf.path() + ".type", "expected \"text\", got \"" + type + "\"");
        DI_ASSIGN_OR_RETURN(std::string t, bf.required_str("text"));
        if (i) text += "\n\n";
        text += t;
        return Status::ok();
      }));
      m.content.push_back({ContentPart::Kind::kText, std::move(text), {}});
    } else {
      return f.error("system", "expected a string or an array of text blocks, got " + describe_json(*sys));
    }
    if (!m.content.empty() && !m.content[0].text.empty()) conv.messages.push_back(std::move(m));
  }

  DI_ASSIGN_OR_RETURN(const ordered_json* msgs, f.array("messages"));
  if (msgs == nullptr) return f.error("messages", "Field required");
  if (msgs->empty()) return bad("messages", "at least one message is required");
  PendingUses pending;
  for (size_t i = 0; i < msgs->size(); ++i) {
    const ordered_json& m = (*msgs)[i];
    std::string path = "messages." + std::to_string(i);
    if (!m.is_object()) return bad(path, "expected an object, got " + describe_json(m));
    Fields mf(kP, m, path);
    DI_ASSIGN_OR_RETURN(std::string role, mf.required_str("role"));
    const ordered_json* content = mf.get("content");
    if (content == nullptr) return mf.error("content", "Field required");
    if (role == "user") {
      DI_RETURN_IF_ERROR(read_user(*content, path, conv, pending));
    } else {
      if (!pending.ids.empty()) return unanswered_tool_uses(pending.message, pending.ids[0]);
      if (role == "assistant") {
        DI_RETURN_IF_ERROR(read_assistant(*content, path, i, conv, pending, options));
      } else if (role == "system") {
        // Extension: a system message inside the conversation reaches the model as a reminder.
        if (!content->is_string()) return mf.error("content", "expected a string");
        Message u;
        u.role = Role::kUser;
        u.content.push_back({ContentPart::Kind::kText,
                             "<system-reminder>\n" + content->get<std::string>() + "\n</system-reminder>", {}});
        conv.messages.push_back(std::move(u));
      } else {
        return mf.error("role", "expected \"user\" or \"assistant\", got \"" + role + "\"");
      }
    }
  }
  // Tool uses of a final assistant message stay open only if the client is prefilling; the
  // model cannot continue a turn whose calls have no results.
  if (!pending.ids.empty()) return unanswered_tool_uses(pending.message, pending.ids[0]);

  // Tools.
  std::set<std::string> dropped;
  DI_RETURN_IF_ERROR(read_tools(f, dotted("tools"), [&](const Fields& tf) -> Result<std::optional<ToolDefinition>> {
    DI_ASSIGN_OR_RETURN(auto type, tf.str("type"));
    if (type && *type != "custom") {
      if (type->rfind("web_search", 0) == 0 && options.ignore_server_tools) {
        DI_ASSIGN_OR_RETURN(auto n, tf.str("name"));
        dropped.insert(n.value_or("web_search"));
        return std::optional<ToolDefinition>();
      }
      return bad(tf.path(), "server tools are not supported");
    }
    DI_ASSIGN_OR_RETURN(ToolDefinition def, read_function_tool(tf, "input_schema", true));
    return std::optional<ToolDefinition>(std::move(def));
  }, conv.tools));
  bool forced_tool = false;
  DI_ASSIGN_OR_RETURN(const ordered_json* tc, f.object("tool_choice"));
  if (tc != nullptr) {
    Fields cf(kP, *tc, "tool_choice");
    DI_ASSIGN_OR_RETURN(auto type, cf.one_of("type", {"auto", "any", "tool", "none"}));
    if (!type) return cf.error("type", "Field required");
    DI_ASSIGN_OR_RETURN(auto dptu, cf.boolean("disable_parallel_tool_use"));
    io.parallel_tool_calls = !dptu.value_or(false);
    if (*type == "none") {
      conv.tool_choice = ToolChoiceMode::kNone;
    } else if (*type == "any") {
      conv.tool_choice = ToolChoiceMode::kRequired;
    } else if (*type == "tool") {
      DI_ASSIGN_OR_RETURN(std::string name, cf.required_str("name"));
      if (dropped.count(name)) {
        conv.tool_choice = ToolChoiceMode::kAuto;  // the chosen server tool was dropped
      } else if (!narrow_to_tool(conv, [&](const ToolDefinition& t) { return t.name == name; })) {
        return cf.error("name", "no tool named \"" + name + "\" in tools");
      }
    }
    if (conv.tool_choice == ToolChoiceMode::kRequired && conv.tools.empty())
      return cf.error("type", "\"" + *type + "\" needs at least one tool in tools");
    forced_tool = conv.tool_choice == ToolChoiceMode::kRequired;
  }

  // Thinking: explicit type wins, then output_config.effort, then the default.
  ThinkingChoice choice;
  DI_RETURN_IF_ERROR(read_thinking_object(f, "Field required", choice, io));
  DI_ASSIGN_OR_RETURN(const ordered_json* oc, f.object("output_config"));
  if (oc != nullptr) {
    Fields of(kP, *oc, "output_config");
    DI_ASSIGN_OR_RETURN(choice.effort,
                        of.one_of("effort", {"low", "medium", "high", "xhigh", "ultra", "max"}));
  }
  DI_RETURN_IF_ERROR(resolve_thinking_with_tool_choice(
      kP, choice, options.default_thinking, forced_tool,
      "Thinking may not be enabled when tool_choice forces tool use.", conv));
  return Status::ok();
}

}  // namespace di::recipe
