// DeepSeek V3.2 (DSML era) prompt rendering, matching DeepSeek's reference encoder
// (encoding_dsv32.encode_messages) byte for byte, including its failure cases. Derived from the
// reference encoder's recorded outputs; the per-message rules are the V3.2 chat format:
// "<｜User｜>{content}<｜Assistant｜>" + <think>/</think>, tool results as <function_results>.
#include "recipe/encoding/dsml.h"
#include "recipe/encoding/encoder.h"
#include "recipe/encoding/py_json.h"
#include "recipe/encoding/tokens.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string role_of(const ordered_json& m) {
  return m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
}

bool truthy(const ordered_json& m, const char* key) {
  if (!m.contains(key)) return false;
  const ordered_json& v = m[key];
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  if (v.is_number()) return v.get<double>() != 0;
  return true;
}

std::string str_of(const ordered_json& m, const char* key) {
  if (!m.contains(key) || m[key].is_null()) return "";
  if (m[key].is_string()) return m[key].get<std::string>();
  return py_json_dumps(m[key]);
}

int last_user_index(const std::vector<const ordered_json*>& msgs) {
  for (int i = static_cast<int>(msgs.size()) - 1; i >= 0; --i) {
    std::string r = role_of(*msgs[i]);
    if (r == "user" || r == "developer") return i;
  }
  return -1;
}

// Python's repr of a message dict, for the reference's "Invalid message" errors.
std::string py_dict_repr(const ordered_json& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m.items()) {
    if (!first) out += ", ";
    first = false;
    out += "'" + k + "': ";
    if (v.is_string()) out += "'" + v.get<std::string>() + "'";
    else if (v.is_null()) out += "None";
    else if (v.is_boolean()) out += v.get<bool>() ? "True" : "False";
    else out += py_json_dumps(v);
  }
  return out + "}";
}

Status render_message(RenderedPrompt& out, int index, const std::vector<const ordered_json*>& msgs,
                      bool thinking) {
  if (index < 0 || index >= static_cast<int>(msgs.size()))
    return Status::invalid_argument("DS32EncodingError: Index " + std::to_string(index) +
                                    " out of range for messages list of length " +
                                    std::to_string(msgs.size()));
  const ordered_json& msg = *msgs[index];
  const int last_user = last_user_index(msgs);
  const std::string role = role_of(msg);
  const DsmlTags tags = dsml_tags_v32();

  auto extras = [&](void) -> Status {
    if (truthy(msg, "tools")) {
      DI_ASSIGN_OR_RETURN(ordered_json fns, functions_from_tools(msg["tools"]));
      out.tmpl("\n\n");
      append_tool_prompt_v32(out, fns);
    }
    if (truthy(msg, "response_format")) {
      out.tmpl("\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n");
      out.text(py_json_dumps(msg["response_format"]));
    }
    return Status::ok();
  };
  auto after_user = [&] {
    out.tmpl(tokens::kAssistant);
    out.tmpl(index == last_user && thinking ? tokens::kThinkStart : tokens::kThinkEnd);
  };

  if (role == "system") {
    out.text(str_of(msg, "content"));
    return extras();
  }
  if (role == "developer") {
    if (!truthy(msg, "content"))
      return Status::invalid_argument("DS32EncodingError: Invalid message for role `developer`: " +
                                      py_dict_repr(msg));
    out.tmpl(tokens::kUser);
    DI_RETURN_IF_ERROR(extras());
    out.tmpl("\n\n# The user's message is: ");
    out.text(str_of(msg, "content"));
    after_user();
    return Status::ok();
  }
  if (role == "user") {
    out.tmpl(tokens::kUser);
    out.text(str_of(msg, "content"));
    after_user();
    return Status::ok();
  }
  if (role == "tool") {
    int prev = index - 1;
    while (prev >= 0 && role_of(*msgs[prev]) == "tool") --prev;
    if (!(index == 0 || (prev >= 0 && role_of(*msgs[prev]) == "assistant")))
      return Status::invalid_argument("DS32EncodingError: Invalid messages at " +
                                      std::to_string(index));
    const int order = index - prev;
    const ordered_json* calls = prev >= 0 && msgs[prev]->contains("tool_calls")
                                    ? &(*msgs[prev])["tool_calls"] : nullptr;
    if (calls == nullptr || !calls->is_array() || calls->empty() ||
        static_cast<int>(calls->size()) < order)
      return Status::invalid_argument("DS32EncodingError: No tool calls but found tool output");
    if (order == 1) out.tmpl("\n\n<function_results>");
    out.tmpl("\n<result>");
    out.text(str_of(msg, "content"));
    out.tmpl("</result>");
    if (order == static_cast<int>(calls->size())) {
      out.tmpl("\n</function_results>");
      out.tmpl(index >= last_user && thinking ? "\n\n<think>" : "\n\n</think>");
    }
    return Status::ok();
  }
  if (role == "assistant") {
    const bool has_calls = truthy(msg, "tool_calls");
    if (thinking && index > last_user) {
      if (!truthy(msg, "reasoning_content") && !has_calls)
        return Status::invalid_argument(
            "DS32EncodingError: ThinkingMode: thinking, invalid message without "
            "reasoning_content/tool_calls `" + py_dict_repr(msg) + "` after last user message");
      out.text(str_of(msg, "reasoning_content"));
      out.tmpl(tokens::kThinkEnd);
    }
    out.text(str_of(msg, "content"));
    if (has_calls) {
      out.tmpl("\n\n");
      DI_RETURN_IF_ERROR(append_tool_calls(out, tags, msg["tool_calls"]));
    }
    out.tmpl(tokens::kEos);
    return Status::ok();
  }
  return Status::invalid_argument("NotImplementedError: Unknown role: " + role);
}

}  // namespace

Result<RenderedPrompt> encode_messages_dsv32(const ordered_json& messages, const RenderOptions& o) {
  if (o.thinking_mode != "chat" && o.thinking_mode != "thinking")
    return Status::invalid_argument("DS32EncodingError: Invalid thinking_mode `" + o.thinking_mode + "`");
  const bool thinking = o.thinking_mode == "thinking";
  std::vector<const ordered_json*> full;
  for (const auto& m : o.context) full.push_back(&m);
  for (const auto& m : messages) full.push_back(&m);

  // drop_thinking keeps user/system/tool messages and everything from the last user message
  // on; earlier assistant turns lose their reasoning and anything else (developer) is dropped.
  std::vector<ordered_json> stripped;  // owns the reasoning-free copies
  stripped.reserve(full.size());
  if (thinking && o.drop_thinking) {
    const int last_user = last_user_index(full);
    std::vector<const ordered_json*> kept;
    for (int i = 0; i < static_cast<int>(full.size()); ++i) {
      std::string r = role_of(*full[i]);
      if (r == "user" || r == "system" || r == "tool" || i >= last_user) {
        kept.push_back(full[i]);
      } else if (r == "assistant") {
        ordered_json copy = *full[i];
        copy.erase("reasoning_content");
        stripped.push_back(std::move(copy));
        kept.push_back(&stripped.back());
      }
    }
    full = std::move(kept);
  }

  RenderedPrompt out;
  if (o.add_default_bos_token && o.context.empty()) out.tmpl(tokens::kBos);
  const int offset = static_cast<int>(o.context.size());
  for (int i = 0; i < static_cast<int>(messages.size()); ++i) {
    DI_RETURN_IF_ERROR(render_message(out, i + offset, full, thinking));
  }
  return out;
}

}  // namespace di::recipe
