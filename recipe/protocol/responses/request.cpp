// Responses request parsing. Items become messages in order: message items by role, reasoning
// items as the next assistant turn's reasoning, function/custom tool calls appended to the
// assistant turn they follow, their outputs as tool messages. Every call needs exactly one
// output before the next message. Stored state (previous_response_id) is not supported.
#include "recipe/protocol/responses/request.h"

#include <algorithm>
#include <map>
#include <set>

#include "recipe/encoding/py_json.h"
#include "recipe/protocol/request_steps.h"
#include "recipe/protocol/sampling_fields.h"
#include "recipe/protocol/tool_fields.h"

namespace di::recipe {
namespace {

constexpr Protocol kP = Protocol::kResponses;

Status bad(const std::string& param, const std::string& msg) { return bad_param(kP, param, msg); }

// OpenAI params name array elements with brackets: "input[2].content[0]".
std::function<std::string(size_t)> indexed(const std::string& prefix) {
  return [prefix](size_t i) { return prefix + "[" + std::to_string(i) + "]"; };
}

// Content blocks of a message item.
Status read_blocks(const ordered_json& content, const std::string& path, const std::string& role,
                   std::vector<ContentPart>& out) {
  auto add_text = [&](std::string t) { out.push_back({ContentPart::Kind::kText, std::move(t), {}}); };
  return read_string_or_objects(kP, content, path, "content items", add_text, indexed(path),
                                [&](const Fields& f, size_t) -> Status {
    const std::string& bp = f.path();
    const std::string type = block_type(f.json());
    if (type == "input_text" || type == "output_text" || type == "text") {
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("text"));
      out.push_back({ContentPart::Kind::kText, std::move(t), {}});
    } else if (type == "refusal") {
      DI_ASSIGN_OR_RETURN(std::string t, f.required_str("refusal"));
      out.push_back({ContentPart::Kind::kText, std::move(t), {}});
    } else if (type == "input_image") {
      if (role != "user" && role != "developer")
        return bad(bp, "Image in " + role + " message is unsupported");
      if (f.has("file_id"))
        return f.error("file_id", "file_id is not supported. Pass the image as a base64 data url instead.");
      DI_ASSIGN_OR_RETURN(std::string url, f.required_str("image_url"));
      DI_ASSIGN_OR_RETURN(auto detail, f.one_of("detail", {"auto", "low", "high", "original"}));
      ImageRef r;
      r.kind = url.rfind("data:", 0) == 0 ? ImageRef::Kind::kDataUrl : ImageRef::Kind::kUrl;
      r.url = url;
      r.detail = detail.value_or("");
      out.push_back({ContentPart::Kind::kImage, "", std::move(r)});
    } else if (type == "input_file") {
      out.push_back({ContentPart::Kind::kText, "[Unsupported Document]", {}});
    } else {
      return bad(bp + ".type", "unsupported content type \"" + type + "\"");
    }
    return Status::ok();
  });
}

std::string output_text(const ordered_json& output, const std::string& path, Status& st) {
  if (output.is_string()) return output.get<std::string>();
  std::vector<ContentPart> parts;
  st = read_blocks(output, path, "tool", parts);
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) text += "\n\n";
    text += parts[i].kind == ContentPart::Kind::kText ? parts[i].text : "[Unsupported Image]";
  }
  return text;
}

// apply_patch as the model sees it: one string parameter carrying the whole patch.
ToolDefinition apply_patch_tool(const std::optional<std::string>& description) {
  ToolDefinition t;
  t.name = "apply_patch";
  t.custom = true;
  t.description = description.value_or(
      "Edit files by applying a patch. Pass the complete patch text, from \"*** Begin Patch\" to "
      "\"*** End Patch\", with *** Add File / *** Update File / *** Delete File sections, as the "
      "`input` string.");
  t.parameters = ordered_json{{"type", "object"},
                              {"properties", {{"input", {{"type", "string"},
                                                         {"description", "The entire patch."}}}}},
                              {"required", {"input"}},
                              {"additionalProperties", false}};
  t.has_parameters = true;
  return t;
}

}  // namespace

Status read_responses_fields(const Fields& f, const ConversionOptions& options, Conversation& conv,
                             InferenceOptions& io) {
  SamplingOptions& s = io.sampling;
  if (f.has("previous_response_id"))
    return f.error("previous_response_id", "stored responses are not supported; send the whole "
                                           "conversation in input");
  DI_ASSIGN_OR_RETURN(s.max_tokens, f.integer("max_output_tokens", 1, INT32_MAX));
  DI_ASSIGN_OR_RETURN(s.temperature, f.number("temperature", 0, 2));
  DI_ASSIGN_OR_RETURN(s.top_p, f.number("top_p", 0, 1, true, false));
  DI_ASSIGN_OR_RETURN(s.top_logprobs, f.integer("top_logprobs", 0, 20));
  if (s.top_logprobs && *s.top_logprobs > 0) s.logprobs = true;
  DI_RETURN_IF_ERROR(read_extra_sampling(f, s));
  DI_ASSIGN_OR_RETURN(auto stream, f.boolean("stream"));
  io.stream = stream.value_or(false);
  io.include_usage = true;
  DI_ASSIGN_OR_RETURN(auto ptc, f.boolean("parallel_tool_calls"));
  io.parallel_tool_calls = ptc.value_or(true);
  DI_ASSIGN_OR_RETURN(auto user, f.str("user"));
  io.user = user.value_or("");

  DI_ASSIGN_OR_RETURN(auto instructions, f.str("instructions"));
  if (instructions && !instructions->empty()) {
    Message m;
    m.role = Role::kSystem;
    m.content.push_back({ContentPart::Kind::kText, *instructions, {}});
    conv.messages.push_back(std::move(m));
  }

  const ordered_json* input = f.get("input");
  if (input == nullptr && !instructions) return f.error("input", "required (or instructions)");
  std::set<std::string> call_ids;
  std::vector<std::string> open_calls;  // calls still waiting for their output
  std::map<std::string, std::string> answered;  // call id -> the output item answering it
  auto last_assistant_open = [&]() -> Message* {
    // The assistant turn new calls / text / reasoning may join.
    if (!conv.messages.empty() && conv.messages.back().role == Role::kAssistant)
      return &conv.messages.back();
    return nullptr;
  };
  auto require_outputs = [&](const std::string& at) -> Status {
    if (open_calls.empty()) return Status::ok();
    return bad(at, "tool call \"" + open_calls.front() + "\" has no output before this item; every "
                   "function_call needs a function_call_output");
  };
  if (input != nullptr && input->is_string()) {
    Message m;
    m.role = Role::kUser;
    m.content.push_back({ContentPart::Kind::kText, input->get<std::string>(), {}});
    conv.messages.push_back(std::move(m));
  } else if (input != nullptr) {
    if (!input->is_array()) return f.error("input", "expected a string or an array of items, got " +
                                                        describe_json(*input));
    for (size_t i = 0; i < input->size(); ++i) {
      const ordered_json& item = (*input)[i];
      std::string ip = "input[" + std::to_string(i) + "]";
      if (!item.is_object()) return bad(ip, "expected an object, got " + describe_json(item));
      Fields itf(kP, item, ip);
      std::string type = block_type(item);
      if (type.empty() || type == "message") {
        DI_ASSIGN_OR_RETURN(auto role, itf.one_of("role", {"user", "assistant", "system", "developer"}));
        if (!role) return itf.error("role", "required");
        DI_RETURN_IF_ERROR(require_outputs(ip));
        const ordered_json* content = itf.get("content");
        if (content == nullptr) return itf.error("content", "required");
        std::vector<ContentPart> parts;
        DI_RETURN_IF_ERROR(read_blocks(*content, ip + ".content", *role, parts));
        if (*role == "assistant") {
          Message* a = last_assistant_open();
          std::string text;
          for (size_t k = 0; k < parts.size(); ++k) text += (k ? "\n\n" : "") + parts[k].text;
          if (a != nullptr && a->tool_calls.empty()) {
            // Consecutive assistant output items are one turn.
            if (!a->content.empty() && !a->content[0].text.empty()) a->content[0].text += "\n\n" + text;
            else a->content = {{ContentPart::Kind::kText, text, {}}};
          } else {
            Message m;
            m.role = Role::kAssistant;
            m.content.push_back({ContentPart::Kind::kText, text, {}});
            conv.messages.push_back(std::move(m));
          }
        } else {
          Message m;
          m.role = *role == "system" ? Role::kSystem : *role == "developer" ? Role::kDeveloper : Role::kUser;
          m.content = std::move(parts);
          conv.messages.push_back(std::move(m));
        }
      } else if (type == "reasoning") {
        DI_RETURN_IF_ERROR(require_outputs(ip));
        std::string text;
        bool any = false;
        for (const char* key : {"content", "summary"}) {
          DI_ASSIGN_OR_RETURN(const ordered_json* arr, itf.array(key));
          if (arr == nullptr || any) continue;
          for (size_t k = 0; k < arr->size(); ++k) {
            const ordered_json& b = (*arr)[k];
            if (!b.is_object() || !b.contains("text") || !b["text"].is_string())
              return bad(ip + "." + key + "[" + std::to_string(k) + "]", "expected {\"text\": ...}");
            text += (any ? "\n" : "") + b["text"].get<std::string>();
            any = true;
          }
        }
        Message* a = last_assistant_open();
        if (a != nullptr && a->content.empty() && a->tool_calls.empty()) {
          a->reasoning_content = a->reasoning_content ? *a->reasoning_content + "\n" + text : text;
        } else {
          Message m;
          m.role = Role::kAssistant;
          m.reasoning_content = text;
          conv.messages.push_back(std::move(m));
        }
      } else if (type == "function_call" || type == "custom_tool_call") {
        ToolCall c;
        DI_ASSIGN_OR_RETURN(c.id, itf.required_str("call_id"));
        if (c.id.empty()) return itf.error("call_id", "must not be empty");
        if (!call_ids.insert(c.id).second)
          return itf.error("call_id", "call ids must be unique, \"" + c.id + "\" appears twice");
        DI_ASSIGN_OR_RETURN(c.name, itf.required_str("name"));
        if (type == "function_call") {
          DI_ASSIGN_OR_RETURN(c.arguments, itf.required_str("arguments"));
          ordered_json args;
          DI_RETURN_IF_ERROR(itf.json_string("arguments", c.arguments, &args));
          DI_ASSIGN_OR_RETURN(auto ns, itf.str("namespace"));
          if (ns && !ns->empty()) c.name = *ns + "::" + c.name;
        } else {
          DI_ASSIGN_OR_RETURN(std::string in, itf.required_str("input"));
          c.arguments = py_json_dumps(ordered_json{{"input", in}});
        }
        Message* a = last_assistant_open();
        if (a == nullptr) {
          conv.messages.push_back(Message{Role::kAssistant, {}, std::nullopt, {}, ""});
          a = &conv.messages.back();
        }
        a->tool_calls.push_back(std::move(c));
        open_calls.push_back(a->tool_calls.back().id);
      } else if (type == "function_call_output" || type == "custom_tool_call_output") {
        DI_ASSIGN_OR_RETURN(std::string id, itf.required_str("call_id"));
        // Call ids are unique in the whole input, so a second output for one is a duplicate.
        if (auto a = answered.find(id); a != answered.end())
          return itf.error("call_id", "duplicate output for call \"" + id + "\", already answered by " +
                                          a->second);
        auto it = std::find(open_calls.begin(), open_calls.end(), id);
        if (it == open_calls.end())
          return itf.error("call_id", "\"" + id + "\" does not answer an earlier function_call "
                                      "without output");
        open_calls.erase(it);
        answered.emplace(id, ip);
        const ordered_json* out = itf.get("output");
        if (out == nullptr) return itf.error("output", "required");
        Status st;
        Message m;
        m.role = Role::kTool;
        m.tool_call_id = id;
        m.content.push_back({ContentPart::Kind::kText, output_text(*out, ip + ".output", st), {}});
        DI_RETURN_IF_ERROR(st);
        conv.messages.push_back(std::move(m));
      } else if (type == "item_reference") {
        return itf.error("type", "item_reference needs stored responses, which are not supported");
      }
      // Other item types (web_search_call, ...) are server-side records: ignored.
    }
  }
  DI_RETURN_IF_ERROR(require_outputs("input"));
  if (conv.messages.empty()) return bad("input", "Empty input messages");

  // Tools: functions, namespaces (flattened to "ns::name"), apply_patch, web_search (dropped).
  DI_ASSIGN_OR_RETURN(const ordered_json* tools, f.array("tools"));
  std::set<std::string> custom_names;
  if (tools != nullptr) {
    std::set<std::string> names;
    auto unique_name = [&](std::string n) {
      std::string base = n;
      for (int k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
      names.insert(n);
      return n;
    };
    for (size_t i = 0; i < tools->size(); ++i) {
      std::string tp = "tools[" + std::to_string(i) + "]";
      const ordered_json& t = (*tools)[i];
      if (!t.is_object()) return bad(tp, "expected an object, got " + describe_json(t));
      Fields tf(kP, t, tp);
      DI_ASSIGN_OR_RETURN(std::string type, tf.required_str("type"));
      if (type == "function") {
        DI_ASSIGN_OR_RETURN(ToolDefinition def, read_function_tool(tf, "parameters", false));
        if (names.count(def.name))
          return bad("tools", "tool names must be unique, \"" + def.name + "\" appears twice");
        names.insert(def.name);
        conv.tools.push_back(std::move(def));
      } else if (type == "namespace") {
        DI_ASSIGN_OR_RETURN(std::string ns, tf.required_str("name"));
        if (!valid_tool_name(ns)) return tf.error("name", "expected 1 to 128 characters of a-z, A-Z, 0-9, '_' or '-'");
        DI_ASSIGN_OR_RETURN(auto ns_desc, tf.str("description"));
        DI_ASSIGN_OR_RETURN(const ordered_json* inner, tf.array("tools"));
        if (inner == nullptr) return tf.error("tools", "required, expected an array of function tools");
        DI_RETURN_IF_ERROR(for_each_object(kP, *inner, indexed(tp + ".tools"), [&](const Fields& itf, size_t) -> Status {
          DI_ASSIGN_OR_RETURN(auto itype, itf.one_of("type", {"function"}));
          DI_ASSIGN_OR_RETURN(ToolDefinition def, read_function_tool(itf, "parameters", false));
          def.name = unique_name(ns + "::" + def.name);
          if (ns_desc || def.description)
            def.description = ns_desc.value_or("") + "\n" + def.description.value_or("");
          conv.tools.push_back(std::move(def));
          return Status::ok();
        }));
      } else if (type == "custom") {
        DI_ASSIGN_OR_RETURN(std::string name, tf.required_str("name"));
        if (name != "apply_patch")
          return tf.error("name", "only the \"apply_patch\" custom tool is supported, got \"" + name + "\"");
        DI_ASSIGN_OR_RETURN(auto desc, tf.str("description"));
        conv.tools.push_back(apply_patch_tool(desc));
        names.insert(name);
        custom_names.insert(name);
      } else if (type.rfind("web_search", 0) == 0) {
        // Hosted tools run on OpenAI's side; a self-hosted model has none: dropped.
      } else {
        return tf.error("type", "unsupported tool type \"" + type + "\"");
      }
    }
  }
  auto read_choice_object = [&](const Fields& cf) -> Status {
    DI_ASSIGN_OR_RETURN(std::string type, cf.required_str("type"));
    if (type == "function" || type == "custom") {
      DI_ASSIGN_OR_RETURN(std::string name, cf.required_str("name"));
      const bool custom = type == "custom";
      if (!narrow_to_tool(conv, [&](const ToolDefinition& t) { return t.name == name && t.custom == custom; }))
        return cf.error("name", "no " + type + " tool named \"" + name + "\" in tools");
    } else if (type.rfind("web_search", 0) == 0) {
      conv.tool_choice = ToolChoiceMode::kAuto;  // its tool was dropped
    } else if (type == "allowed_tools") {
      return cf.error("type", "\"allowed_tools\" is not supported");
    } else {
      return cf.error("type", "expected \"function\" or \"custom\", got \"" + type + "\"");
    }
    return Status::ok();
  };
  DI_ASSIGN_OR_RETURN(const bool forced_tool,
                      read_openai_tool_choice(f, "\"none\", \"auto\", \"required\" or an object",
                                              read_choice_object, conv));

  // Thinking: reasoning.effort none → off; absent → the default; anything else → on.
  ThinkingChoice choice;
  DI_ASSIGN_OR_RETURN(const ordered_json* reasoning, f.object("reasoning"));
  if (reasoning != nullptr) {
    Fields rf(kP, *reasoning, "reasoning");
    DI_ASSIGN_OR_RETURN(choice.effort, rf.one_of("effort", {"none", "minimal", "low", "medium",
                                                            "high", "xhigh", "max"}));
    DI_ASSIGN_OR_RETURN(auto summary, rf.one_of("summary", {"auto", "concise", "detailed", "none"}));
    (void)summary;
  }
  DI_RETURN_IF_ERROR(resolve_thinking_with_tool_choice(
      kP, choice, options.default_thinking, forced_tool,
      "reasoning does not support a required or named tool_choice; set reasoning.effort to "
      "\"none\" or use \"auto\"",
      conv));

  DI_ASSIGN_OR_RETURN(const ordered_json* text, f.object("text"));
  if (text != nullptr) {
    Fields tf(kP, *text, "text");
    DI_ASSIGN_OR_RETURN(auto verbosity, tf.one_of("verbosity", {"low", "medium", "high"}));
    (void)verbosity;
    DI_ASSIGN_OR_RETURN(const ordered_json* fmt, tf.object("format"));
    if (fmt != nullptr) {
      Fields ff(kP, *fmt, "text.format");
      DI_ASSIGN_OR_RETURN(auto type, ff.one_of("type", {"text", "json_object", "json_schema"}));
      if (!type) return ff.error("type", "required");
      if (*type == "json_object") {
        conv.response_format.type = ResponseFormat::Type::kJsonObject;
      } else if (*type == "json_schema") {
        DI_RETURN_IF_ERROR(read_json_schema_format(ff, /*schema_required=*/true, conv.response_format));
      }
    }
  }
  (void)custom_names;
  return Status::ok();
}

}  // namespace di::recipe
