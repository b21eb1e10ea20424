// DeepSeek V4 and V4.1 prompt rendering, matching DeepSeek's reference encoders
// (encode_messages in encoding_dsv4.py / encoding_dsv41.py) byte for byte. The algorithm was
// re-derived from the reference encoders' recorded outputs (tests/fixtures/recipe/dsv-encoders).
// Where deepseek-recipe (the public Rust port) differs, this file follows the reference encoders:
// reasoning of turns before the last user message is dropped (unless tools are declared), tool
// results become <tool_result> blocks of a user turn, effort texts/numbers are the reference's.
#include <algorithm>
#include <array>

#include "recipe/encoding/dsml.h"
#include "recipe/encoding/encoder.h"
#include "recipe/encoding/py_json.h"
#include "recipe/encoding/tokens.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::string_view kEffortAbsoluteMax =
    "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
    "You MUST be very thorough in your thinking and comprehensively decompose the problem to "
    "resolve the root cause, rigorously stress-testing your logic against all potential paths, "
    "edge cases, and adversarial scenarios.\n"
    "Explicitly write out your entire deliberation process, documenting every intermediate step, "
    "considered alternative, and rejected hypothesis to ensure absolutely no assumption is left "
    "unchecked.\n\n";
constexpr std::string_view kEffortBeyondMax =
    "Reasoning Effort: Beyond maximum \xE2\x80\x94 exhaustive, relentless, and uncompromising.\n"
    "You MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: "
    "exhaustively decompose the problem into its most fundamental components, trace every causal "
    "chain to its root, and resolve the underlying cause rather than any surface symptom.\n"
    "Do not stop reasoning until you have independently verified the solution from multiple "
    "angles and are certain that no assumption remains unchecked and no error remains "
    "undiscovered.\n\n";

// Task tokens replace the assistant header after a user turn (internal classification tasks).
// The order is the one the reference encoder's error message lists.
constexpr std::array<std::string_view, 6> kTasks = {"read_url", "query",  "authority",
                                                    "action",   "domain", "title"};

std::string py_repr(const ordered_json& v) {
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return py_json_dumps(v);
}

// The effort text placed before message 0 in thinking mode ("" = none).
Result<std::string> effort_text(const RenderOptions& o, bool v41) {
  const ordered_json& e = o.reasoning_effort;
  if (v41) {
    int n = 0;
    if (e.is_null()) n = 50;
    else if (e.is_number_integer() || e.is_number_unsigned()) {
      int64_t x = e.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(e.get<uint64_t>(), 1000))
                                         : e.get<int64_t>();
      if (x >= 1 && x <= 100) n = static_cast<int>(x);
    } else if (e.is_string()) {
      const std::string& s = e.get_ref<const std::string&>();
      n = s == "low" ? 25 : s == "high" ? 50 : s == "xhigh" ? 75 : s == "max" ? 100 : 0;
    }
    if (n == 0)
      return Status::invalid_argument("ValueError: Invalid reasoning effort for deepseek_v41: " +
                                      py_repr(e) +
                                      ", should be int within [1,100] or ['low', 'high', 'xhigh', 'max']");
    return std::string(tokens::kSystem) + "Reasoning Effort: " + std::to_string(n) +
           " (range 1-100, the higher the value, the more thorough the reasoning)\n\n";
  }
  const std::string& profile = o.reasoning_effort_profile;
  std::string level = e.is_string() ? e.get<std::string>() : "";
  if (profile == "preview") {
    if (e.is_null() || level == "high") return std::string();
    if (level == "max") return std::string(kEffortAbsoluteMax);
    return Status::invalid_argument("ValueError: Invalid reasoning effort " + py_repr(e) +
                                    " for profile 'preview'; expected one of ['high', 'max']");
  }
  if (profile == "official") {
    if (e.is_null() || level == "low") return std::string();
    if (level == "high") return std::string(kEffortAbsoluteMax);
    if (level == "max") return std::string(kEffortBeyondMax);
    return Status::invalid_argument("ValueError: Invalid reasoning effort " + py_repr(e) +
                                    " for profile 'official'; expected one of ['low', 'high', 'max']");
  }
  return Status::invalid_argument("ValueError: Invalid reasoning effort profile " +
                                  py_repr(ordered_json(profile)) +
                                  "; expected one of ['preview', 'official']");
}

// One piece of a (possibly merged) user turn.
struct Block {
  enum Kind { kText, kToolResult, kImage } kind = kText;
  std::string text;            // kText, or the rendered content of kToolResult
  std::string tool_call_id;    // kToolResult
  ordered_json image;          // kImage: {"type": "image", "url": ...}
};

struct Turn {
  std::string role;  // system | developer | user | assistant | latest_reminder
  const ordered_json* msg = nullptr;
  std::vector<Block> blocks;  // user turns
  bool from_context = false;
  bool drop_reasoning = false;
  bool has_tool_results = false;
};

std::string text_of(const ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return "";
  if (content.is_array()) {
    std::string out;
    bool first = true;
    for (const auto& b : content) {
      if (!first) out += "\n\n";
      first = false;
      std::string type = b.is_object() && b.contains("type") && b["type"].is_string()
                             ? b["type"].get<std::string>() : "unknown";
      if (type == "text" && b.contains("text") && b["text"].is_string()) out += b["text"].get<std::string>();
      else out += "[Unsupported " + type + "]";
    }
    return out;
  }
  return py_json_dumps(content);
}

Status user_blocks(const ordered_json& content, bool v41, bool vision, std::vector<Block>& out) {
  if (!content.is_array()) {
    out.push_back({Block::kText, text_of(content), "", {}});
    return Status::ok();
  }
  for (const auto& b : content) {
    std::string type = b.is_object() && b.contains("type") && b["type"].is_string()
                           ? b["type"].get<std::string>() : "unknown";
    if (type == "text" && b.contains("text") && b["text"].is_string()) {
      out.push_back({Block::kText, b["text"].get<std::string>(), "", {}});
    } else if (type == "image_url" && v41 && b.contains("image_url")) {
      const ordered_json& iu = b["image_url"];
      std::string url = iu.is_string() ? iu.get<std::string>()
                        : iu.is_object() && iu.contains("url") && iu["url"].is_string()
                            ? iu["url"].get<std::string>() : "";
      if (!vision) {
        out.push_back({Block::kText, std::string(tokens::kUnsupportedImage), "", {}});
      } else {
        out.push_back({Block::kImage, "", "", ordered_json{{"type", "image"}, {"url", url}}});
      }
    } else {
      out.push_back({Block::kText, "[Unsupported " + type + "]", "", {}});
    }
  }
  return Status::ok();
}

bool next_wants_header(const std::vector<Turn>& turns, size_t i) {
  if (i + 1 == turns.size()) return true;
  const std::string& r = turns[i + 1].role;
  return r == "assistant" || r == "latest_reminder";
}

}  // namespace

Result<RenderedPrompt> encode_messages_dsv4(const ordered_json& messages, const RenderOptions& o,
                                            bool v41) {
  if (o.thinking_mode != "chat" && o.thinking_mode != "thinking")
    return Status::invalid_argument("ValueError: Invalid thinking_mode: " + o.thinking_mode);
  const bool thinking = o.thinking_mode == "thinking";
  DI_ASSIGN_OR_RETURN(std::string effort, effort_text(o, v41));

  // 1. Flatten context + messages into turns; tool results join the user turn they belong to.
  std::vector<Turn> turns;
  bool any_tools = false;
  auto add = [&](const ordered_json& m, bool from_context) -> Status {
    std::string role = m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
    if (m.contains("tools") && !m["tools"].is_null() && !m["tools"].empty()) any_tools = true;
    if (m.contains("task") && !m["task"].is_null()) {
      std::string task = m["task"].is_string() ? m["task"].get<std::string>() : "";
      if (std::find(kTasks.begin(), kTasks.end(), task) == kTasks.end())
        return Status::invalid_argument(
            "AssertionError: Invalid task: " + py_repr(m["task"]) +
            ". Valid tasks are: ['read_url', 'query', 'authority', 'action', 'domain', 'title']");
    }
    const ordered_json content = m.contains("content") ? m["content"] : ordered_json();
    if (role == "user" || role == "tool") {
      Block tool_block;
      std::vector<Block> blocks;
      if (role == "tool") {
        tool_block.kind = Block::kToolResult;
        tool_block.text = text_of(content);
        if (m.contains("tool_call_id") && m["tool_call_id"].is_string())
          tool_block.tool_call_id = m["tool_call_id"].get<std::string>();
        blocks.push_back(tool_block);
      } else {
        DI_RETURN_IF_ERROR(user_blocks(content, v41, o.vision, blocks));
      }
      bool can_merge = !turns.empty() && turns.back().role == "user" &&
                       turns.back().from_context == from_context &&
                       !(turns.back().msg->contains("task") && !(*turns.back().msg)["task"].is_null()) &&
                       (role == "tool" || turns.back().has_tool_results ||
                        turns.back().msg != nullptr);
      if (can_merge) {
        Turn& t = turns.back();
        t.blocks.insert(t.blocks.end(), blocks.begin(), blocks.end());
        if (role == "tool") t.has_tool_results = true;
        if (role == "user") t.msg = &m;  // a task on the later message governs the header
        return Status::ok();
      }
      Turn t;
      t.role = "user";
      t.msg = &m;
      t.blocks = std::move(blocks);
      t.from_context = from_context;
      t.has_tool_results = role == "tool";
      turns.push_back(std::move(t));
      return Status::ok();
    }
    if (role == "system" || role == "developer" || role == "assistant" || role == "latest_reminder") {
      Turn t;
      t.role = role;
      t.msg = &m;
      t.from_context = from_context;
      turns.push_back(std::move(t));
      return Status::ok();
    }
    return Status::invalid_argument("NotImplementedError: Unknown role: " + role);
  };
  for (const auto& m : o.context) DI_RETURN_IF_ERROR(add(m, true));
  for (const auto& m : messages) DI_RETURN_IF_ERROR(add(m, false));

  // 2. Tool results follow the order of the calls of the assistant turn before them.
  for (size_t i = 1; i < turns.size(); ++i) {
    Turn& t = turns[i];
    if (t.role != "user" || !t.has_tool_results) continue;
    const Turn& prev = turns[i - 1];
    if (prev.role != "assistant" || !prev.msg->contains("tool_calls") ||
        !(*prev.msg)["tool_calls"].is_array())
      continue;
    std::vector<std::string> ids;
    for (const auto& c : (*prev.msg)["tool_calls"])
      ids.push_back(c.is_object() && c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : "");
    std::vector<size_t> slots;
    std::vector<Block> results;
    for (size_t k = 0; k < t.blocks.size(); ++k) {
      if (t.blocks[k].kind == Block::kToolResult) {
        slots.push_back(k);
        results.push_back(t.blocks[k]);
      }
    }
    auto pos = [&](const Block& b) {
      auto it = std::find(ids.begin(), ids.end(), b.tool_call_id);
      return it == ids.end() ? 0 : static_cast<size_t>(it - ids.begin());
    };
    std::stable_sort(results.begin(), results.end(),
                     [&](const Block& a, const Block& b) { return pos(a) < pos(b); });
    for (size_t k = 0; k < slots.size(); ++k) t.blocks[slots[k]] = results[k];
  }

  // 3. drop_thinking: without declared tools, turns before the last user message lose their
  //    reasoning and developer messages there are dropped.
  auto last_user = [&] {
    int idx = -1;
    for (size_t i = 0; i < turns.size(); ++i)
      if (turns[i].role == "user" || turns[i].role == "developer") idx = static_cast<int>(i);
    return idx;
  };
  const bool drop = thinking && o.drop_thinking && !any_tools;
  if (drop) {
    int lu = last_user();
    std::vector<Turn> kept;
    for (size_t i = 0; i < turns.size(); ++i) {
      if (static_cast<int>(i) < lu && turns[i].role == "developer") continue;
      kept.push_back(turns[i]);
    }
    turns = std::move(kept);
  }
  const int lu = last_user();

  // 4. Render.
  RenderedPrompt out;
  const bool has_context = !o.context.empty();
  if (o.add_default_bos_token && !has_context) out.tmpl(tokens::kBos);
  const DsmlTags tags = dsml_tags_v4(v41);

  auto think_open_after_user = [&](size_t i) {
    return thinking && (!drop || static_cast<int>(i) >= lu);
  };
  auto header = [&](size_t i) {
    out.tmpl(tokens::kAssistant);
    out.tmpl(think_open_after_user(i) ? tokens::kThinkStart : tokens::kThinkEnd);
  };
  auto system_extras = [&](const ordered_json& m) -> Status {
    if (m.contains("tools") && !m["tools"].is_null() && !m["tools"].empty()) {
      DI_ASSIGN_OR_RETURN(ordered_json fns, functions_from_tools(m["tools"]));
      out.tmpl("\n\n");
      append_tool_prompt_v4(out, tags, fns);
    }
    if (m.contains("response_format") && !m["response_format"].is_null() &&
        !m["response_format"].empty()) {
      out.tmpl("\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n");
      out.text(py_json_dumps(m["response_format"]));
    }
    return Status::ok();
  };

  ordered_json images = ordered_json::array();
  for (size_t i = 0; i < turns.size(); ++i) {
    const Turn& t = turns[i];
    if (t.from_context) continue;
    const ordered_json& m = *t.msg;
    bool effort_here = i == 0 && thinking && !effort.empty();
    if (effort_here) {
      if (v41) {
        out.tmpl(tokens::kSystem);
        out.tmpl(effort.substr(tokens::kSystem.size()));
      } else {
        out.tmpl(effort);
      }
    }
    const ordered_json content = m.contains("content") ? m["content"] : ordered_json();
    if (t.role == "system") {
      if (v41 && !effort_here) out.tmpl(tokens::kSystem);
      out.text(text_of(content));
      DI_RETURN_IF_ERROR(system_extras(m));
      // V4.1 treats a system message after the start like a user turn for the header.
      if (v41 && i > 0 && next_wants_header(turns, i)) header(i);
    } else if (t.role == "developer") {
      out.tmpl(tokens::kUser);
      out.text(text_of(content));
      DI_RETURN_IF_ERROR(system_extras(m));
      if (next_wants_header(turns, i)) header(i);
    } else if (t.role == "user") {
      out.tmpl(tokens::kUser);
      bool first = true;
      for (const Block& b : t.blocks) {
        if (!first) out.text("\n\n");
        first = false;
        if (b.kind == Block::kText) {
          out.text(b.text);
        } else if (b.kind == Block::kToolResult) {
          out.tmpl("<tool_result>");
          out.text(b.text);
          out.tmpl("</tool_result>");
        } else {
          out.tmpl(tokens::kImage);
          images.push_back(b.image);
        }
      }
      if (m.contains("task") && m["task"].is_string()) {
        out.tmpl("<｜" + m["task"].get<std::string>() + "｜>");
      } else if (next_wants_header(turns, i)) {
        header(i);
      }
    } else if (t.role == "latest_reminder") {
      out.tmpl(tokens::kLatestReminder);
      out.text(text_of(content));
    } else {  // assistant
      if (thinking && (!drop || static_cast<int>(i) > lu)) {
        if (m.contains("reasoning_content")) out.text(text_of(m["reasoning_content"]));
        out.tmpl(tokens::kThinkEnd);
      }
      out.text(text_of(content));
      if (m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty()) {
        out.tmpl("\n\n");
        DI_RETURN_IF_ERROR(append_tool_calls(out, tags, m["tool_calls"]));
      }
      bool wo_eos = m.contains("wo_eos") && m["wo_eos"].is_boolean() && m["wo_eos"].get<bool>();
      if (!wo_eos) out.tmpl(tokens::kEos);
    }
  }
  if (v41 && o.return_multi_modal_data) out.multi_modal_data = ordered_json{{"images", images}};
  return out;
}

}  // namespace di::recipe
