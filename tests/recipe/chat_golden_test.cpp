// Chat Completions requests built from the reference-encoder records must render the records'
// prompts: the request parser + conversation renderer reproduce DeepSeek's reference encoders
// for every record a Chat request can express.
#include <gtest/gtest.h>

#include "recipe/encoding/py_json.h"
#include "recipe/prepare/prepare.h"
#include "tests/recipe/golden.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

// The Chat request equivalent to a record, or null when Chat cannot express it.
ordered_json chat_request_for(const ordered_json& rec, Encoding enc) {
  const ordered_json& in = rec["input"];
  const ordered_json& kw = in["kwargs"];
  if (rec.contains("error")) return nullptr;
  for (const auto& [k, v] : kw.items()) {
    if (k == "thinking_mode") continue;
    if (k == "reasoning_effort" && v.is_string()) continue;
    if (k == "reasoning_effort_profile" && v == "official") continue;
    return nullptr;  // context, drop_thinking, no BOS, integer efforts: encoder-only knobs
  }
  const bool thinking = kw["thinking_mode"] == "thinking";
  if (enc == Encoding::kDsv4 && kw.contains("reasoning_effort") &&
      kw.value("reasoning_effort_profile", "preview") != "official")
    return nullptr;
  ordered_json req{{"model", "deepseek-v4"}};
  ordered_json msgs = ordered_json::array();
  const ordered_json& src = in["messages"];
  for (size_t i = 0; i < src.size(); ++i) {
    ordered_json m = src[i];
    std::string role = m["role"];
    if (m.contains("task") || m.contains("wo_eos")) return nullptr;
    if (role == "developer") return nullptr;
    if (m.contains("content") && m["content"].is_array() && role != "tool") return nullptr;
    if (role == "system") {
      if (!m["content"].is_string() || m["content"].get<std::string>().empty()) return nullptr;
      if (m.contains("tools") || m.contains("response_format")) {
        if (i != 0) return nullptr;
        if (m.contains("tools")) req["tools"] = m["tools"];
        if (m.contains("response_format")) req["response_format"] = m["response_format"];
        m.erase("tools");
        m.erase("response_format");
      }
    }
    if (role == "assistant") {
      if (i + 1 == src.size()) return nullptr;  // a trailing assistant is a prefill here
      // OpenAI rejects an assistant turn with neither content nor tool calls.
      if ((!m.contains("content") || m["content"].is_null()) && !m.contains("tool_calls"))
        return nullptr;
      if (m.contains("tool_calls")) {
        for (auto& c : m["tool_calls"]) {
          auto& a = c["function"]["arguments"];
          if (!a.is_string()) a = py_json_dumps(a);
        }
      }
    }
    msgs.push_back(std::move(m));
  }
  req["messages"] = std::move(msgs);
  req["thinking"] = {{"type", thinking ? "enabled" : "disabled"}};
  if (thinking && kw.contains("reasoning_effort")) req["reasoning_effort"] = kw["reasoning_effort"];
  return req;
}

size_t replay_as_chat(const std::string& name) {
  Encoding enc = *parse_encoding(name);
  RecipeConfig cfg;
  cfg.encoding = enc;
  size_t n = 0;
  for (const auto& rec : testing::load_golden(name)) {
    ordered_json req = chat_request_for(rec, enc);
    if (req.is_null()) continue;
    SCOPED_TRACE(rec["id"].get<std::string>());
    auto p = prepare(cfg, {}, Protocol::kChatCompletions, req.dump());
    EXPECT_TRUE(p.is_ok()) << p.status().message();
    if (!p.is_ok()) continue;
    EXPECT_EQ(p->prompt, rec["prompt"].get<std::string>());
    ++n;
  }
  std::printf("[ replayed %zu %s records as Chat Completions requests ]\n", n, name.c_str());
  return n;
}

TEST(ChatGolden, Dsv4RequestsRenderTheReferencePrompts) { EXPECT_GE(replay_as_chat("dsv4"), 15u); }
TEST(ChatGolden, Dsv41RequestsRenderTheReferencePrompts) { EXPECT_GE(replay_as_chat("dsv41"), 15u); }
TEST(ChatGolden, Dsv32RequestsRenderTheReferencePrompts) { EXPECT_GE(replay_as_chat("dsv32"), 10u); }

}  // namespace
}  // namespace di::recipe
