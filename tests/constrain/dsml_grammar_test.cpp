// The recipe's reply grammar (recipe/encoding/dsml_grammar: EBNF with embedded schemas and control
// tokens by id), compiled by the engine's generic EBNF compiler, against the recipe's DSML
// renderer, which reproduces DeepSeek's reference encoders: tool calls the renderer writes for
// valid arguments must be accepted, in every tag spelling (V3.2, V4, V4.1); arguments that break a
// strict tool's schema, unknown tools, and control tokens typed as plain text must be rejected.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/special_tokens.h"
#include "recipe/encoding/dsml.h"
#include "recipe/encoding/dsml_grammar.h"
#include "recipe/encoding/tokens.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

using testing::full_match;
using ojson = nlohmann::ordered_json;
using recipe::DsmlReplySpec;

// Ids the spec gives the control tokens (any ids: the grammar spells them by id).
constexpr uint32_t kThinkEndId = 128822, kDsmlId = 128793;

std::string think_end() { return special_token_bytes(kThinkEndId); }

const char* kWeather = R"({"type": "object",
  "properties": {"location": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
                 "unit": {"enum": ["celsius", "fahrenheit"]},
                 "filters": {"type": "object", "properties": {"rain": {"type": "boolean"}}, "required": ["rain"],
                             "additionalProperties": false}},
  "required": ["location"], "additionalProperties": false})";

// Replaces the control tokens' text by the bytes grammars spell them with (what the engine's
// vocabulary gives the real control-token ids).
std::string as_control_tokens(std::string s) {
  auto replace = [&](std::string_view from, const std::string& to) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  };
  replace(recipe::tokens::kDsml, special_token_bytes(kDsmlId));
  replace(recipe::tokens::kThinkEnd, think_end());
  return s;
}

std::string rendered_calls(const recipe::DsmlTags& tags, const ojson& calls) {
  recipe::RenderedPrompt p;
  Status st = recipe::append_tool_calls(p, tags, calls);
  EXPECT_TRUE(st.is_ok()) << st.message();
  return p.str();
}

ojson call(const std::string& name, const ojson& args) {
  return {{"type", "function"}, {"function", {{"name", name}, {"arguments", args.dump()}}}};
}

DsmlReplySpec spec_for(const recipe::DsmlTags& tags, bool reasoning, const std::string& mode, bool strict) {
  DsmlReplySpec s;
  s.reasoning = reasoning;
  s.tool_calls = mode == "none" ? DsmlReplySpec::ToolCalls::kNone
                 : mode == "required" ? DsmlReplySpec::ToolCalls::kRequired
                                      : DsmlReplySpec::ToolCalls::kAuto;
  s.tools = {{"get_weather", ojson::parse(kWeather), strict}, {"ping", ojson::object(), strict}};
  s.tags = tags;
  s.think_end_id = kThinkEndId;
  s.dsml_id = kDsmlId;
  return s;
}

// The recipe's spec, then the engine's compile of it (what GrammarCompiler does per vocabulary).
Result<std::shared_ptr<const Grammar>> compile_reply(const DsmlReplySpec& spec) {
  DI_ASSIGN_OR_RETURN(di::request::ConstraintSpec c, recipe::dsml_reply_grammar(spec));
  EXPECT_EQ(c.kind, ConstraintKind::kEbnf);
  return compile_constraint(c);
}

std::shared_ptr<const Grammar> compile(const DsmlReplySpec& spec) {
  auto g = compile_reply(spec);
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return g.is_ok() ? *g : nullptr;
}

TEST(DsmlReplyGrammar, StrictToolCallsRenderedByTheRecipeAreAcceptedInEveryTagSpelling) {
  for (const recipe::DsmlTags& tags : {recipe::dsml_tags_v4(true), recipe::dsml_tags_v4(false), recipe::dsml_tags_v32()}) {
    auto g = compile(spec_for(tags, /*reasoning=*/true, "auto", /*strict=*/true));
    ASSERT_TRUE(g);
    const ojson calls = ojson::array({call("get_weather", {{"location", "Beijing 北京"}, {"days", 2}}),
                                      call("get_weather", {{"location", "a\nb"}, {"unit", "celsius"},
                                                           {"filters", {{"rain", true}}}}),
                                      call("ping", ojson::object())});
    const std::string block = rendered_calls(tags, calls);
    EXPECT_TRUE(full_match(g, as_control_tokens("Let me look that up.</think>" + block))) << block;
    EXPECT_TRUE(full_match(g, as_control_tokens("</think>Some text first.\n\n" + block)));
    EXPECT_TRUE(full_match(g, as_control_tokens("thinking</think>Just an answer, no tools.")));
  }
}

TEST(DsmlReplyGrammar, NotParallelAdmitsExactlyOneCall) {
  for (bool strict : {true, false}) {
    for (const std::string mode : {"auto", "required"}) {
      const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
      DsmlReplySpec spec = spec_for(tags, false, mode, strict);
      spec.parallel = false;
      auto g = compile(spec);
      ASSERT_TRUE(g);
      const std::string one = rendered_calls(tags, ojson::array({call("ping", ojson::object())}));
      const std::string two = rendered_calls(tags, ojson::array({call("ping", ojson::object()),
                                                                  call("get_weather", {{"location", "x"}})}));
      // With the block opened by the prompt (required) the output starts after its opener.
      const std::string opener = "<" + std::string(recipe::tokens::kDsml) + tags.block + ">\n";
      auto body = [&](const std::string& block) {
        return as_control_tokens(mode == "required" ? block.substr(block.find(opener) + opener.size()) : block);
      };
      EXPECT_TRUE(full_match(g, body(one))) << mode << " strict=" << strict;
      EXPECT_FALSE(full_match(g, body(two))) << mode << " strict=" << strict;
      spec.parallel = true;
      auto parallel = compile(spec);
      ASSERT_TRUE(parallel);
      EXPECT_TRUE(full_match(parallel, body(two))) << mode << " strict=" << strict;
    }
  }
}

TEST(DsmlReplyGrammar, ArgumentsThatBreakAStrictSchemaAreRejected) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
  auto g = compile(spec_for(tags, false, "auto", true));
  ASSERT_TRUE(g);
  const ojson bad[] = {
      ojson{{"days", 2}},                                      // required location missing
      ojson{{"location", "x"}, {"days", 9}},                   // above maximum
      ojson{{"location", "x"}, {"unit", "kelvin"}},            // not in the enum
      ojson{{"location", "x"}, {"city", "y"}},                 // not a declared property
      ojson{{"location", "x"}, {"filters", {{"rain", 1}}}},    // nested type
      ojson{{"location", "x"}, {"filters", ojson::object()}},  // nested required
  };
  for (const ojson& args : bad) {
    const std::string text = as_control_tokens(rendered_calls(tags, ojson::array({call("get_weather", args)})));
    EXPECT_FALSE(full_match(g, text)) << args.dump();
  }
  EXPECT_FALSE(full_match(g, as_control_tokens(rendered_calls(tags, ojson::array({call("get_time", ojson::object())})))));
  // The same arguments are fine for a tool that is not strict (the parser still gets valid JSON values).
  auto loose = compile(spec_for(tags, false, "auto", false));
  ASSERT_TRUE(loose);
  EXPECT_TRUE(full_match(loose, as_control_tokens(rendered_calls(tags, ojson::array({call("get_weather", bad[3])})))));
  EXPECT_FALSE(full_match(loose, as_control_tokens(rendered_calls(tags, ojson::array({call("get_time", ojson::object())})))));
}

TEST(DsmlReplyGrammar, ControlTokensTypedAsTextDoNotCount) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
  auto g = compile(spec_for(tags, true, "auto", true));
  ASSERT_TRUE(g);
  const std::string block = rendered_calls(tags, ojson::array({call("ping", ojson::object())}));
  // </think> typed as ordinary text leaves the reasoning open, so the reply cannot end.
  EXPECT_FALSE(full_match(g, "thoughts</think>answer"));
  EXPECT_TRUE(full_match(g, "thoughts</think>more" + think_end() + "answer"));
  // A block spelled with plain-text ｜DSML｜ is answer text, not a tool call: fine as text, but it
  // calls no tool; with the real token it must be well formed.
  EXPECT_TRUE(full_match(g, think_end() + block));
  std::string broken = as_control_tokens("</think>" + block);
  broken.replace(broken.find("ping"), 4, "pong");
  EXPECT_FALSE(full_match(g, broken));
}

TEST(DsmlReplyGrammar, RequiredToolChoiceStartsInsideTheBlock) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(false);
  auto g = compile(spec_for(tags, false, "required", true));
  ASSERT_TRUE(g);
  std::string block = rendered_calls(tags, ojson::array({call("get_weather", {{"location", "Paris"}})}));
  // The prompt already ends with the opener and its newline.
  const std::string opener = "<" + std::string(recipe::tokens::kDsml) + tags.block + ">\n";
  ASSERT_EQ(block.rfind(opener, 0), 0u) << block;
  EXPECT_TRUE(full_match(g, as_control_tokens(block.substr(opener.size()))));
  EXPECT_FALSE(full_match(g, as_control_tokens(block)));
  EXPECT_FALSE(full_match(g, "plain answer"));
}

TEST(DsmlReplyGrammar, JsonAnswerFollowsTheSchemaAfterFreeReasoning) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
  DsmlReplySpec spec = spec_for(tags, true, "none", false);
  spec.content = DsmlReplySpec::Content::kJsonSchema;
  spec.schema = ojson::parse(kWeather);
  spec.schema_strict = true;
  auto g = compile(spec);
  ASSERT_TRUE(g);
  const std::string end = think_end();
  EXPECT_TRUE(full_match(g, "any {reasoning} at all" + end + "\n\n{\"location\": \"Oslo\", \"days\": 3}"));
  EXPECT_FALSE(full_match(g, "r" + end + "{\"days\": 3}"));
  EXPECT_FALSE(full_match(g, "r" + end + "Sure! {\"location\": \"Oslo\"}"));
  EXPECT_FALSE(full_match(g, "{\"location\": \"Oslo\"}"));  // thinking was opened: it must be closed first
  spec.content = DsmlReplySpec::Content::kJsonObject;
  auto obj = compile(spec);
  ASSERT_TRUE(obj);
  EXPECT_TRUE(full_match(obj, end + "{\"anything\": [1, {\"goes\": null}]}"));
  EXPECT_FALSE(full_match(obj, end + "[1, 2]"));
}

TEST(DsmlReplyGrammar, UnsupportedStrictToolSchemasAreRefusedWithTheirPlace) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
  DsmlReplySpec spec = spec_for(tags, false, "auto", true);
  spec.tools[0].parameters = {{"anyOf", ojson::array({ojson::object(), ojson::object()})}};
  auto g = compile_reply(spec);
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("tools[0].parameters"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("anyOf"), std::string::npos) << g.status().message();
  spec.tools[0].parameters = {{"type", "object"}, {"properties", {{"a", {{"type", "string"}}}}},
                              {"required", ojson::array({"b"})}};
  g = compile_reply(spec);
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("\"b\""), std::string::npos) << g.status().message();
  spec.tools[0].parameters = {{"type", "object"}, {"properties", {{"a", {{"not", {{"type", "string"}}}}}}}};
  g = compile_reply(spec);
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("'not'"), std::string::npos) << g.status().message();
}

TEST(DsmlReplyGrammar, ATopLevelRefIsFollowedAndUnknownControlIdsAreSpelledAsText) {
  const recipe::DsmlTags tags = recipe::dsml_tags_v4(true);
  // Required: the output starts inside the block, so free text cannot absorb a bad call.
  DsmlReplySpec spec = spec_for(tags, false, "required", true);
  // Pydantic's shape: the parameters a $ref into $defs.
  spec.tools[0].parameters = {{"$ref", "#/$defs/Args"},
                              {"$defs", {{"Args", ojson::parse(kWeather)}}},
                              {"title", "weather"}};
  spec.think_end_id = -1;  // a tokenizer without these as single tokens: the parser matches text
  spec.dsml_id = -1;
  auto g = compile(spec);
  ASSERT_TRUE(g);
  const std::string opener = "<" + std::string(recipe::tokens::kDsml) + tags.block + ">\n";
  auto inside = [&](const ojson& args) {
    const std::string block = rendered_calls(tags, ojson::array({call("get_weather", args)}));
    return block.substr(opener.size());
  };
  EXPECT_TRUE(full_match(g, inside({{"location", "x"}, {"days", 2}})));
  EXPECT_FALSE(full_match(g, as_control_tokens(inside({{"location", "x"}, {"days", 2}}))));
  EXPECT_FALSE(full_match(g, inside({{"location", 5}})));  // the $ref'd schema's type
  // Markers spelled as text are weaker: a raw string value may run over a closer typed as text,
  // so a later parameter is not checked. That is why the recipe demands the tokens by id.
  EXPECT_TRUE(full_match(g, inside({{"location", "x"}, {"days", 9}})));
  spec.tools[0].parameters = {{"$ref", "#/$defs/Args"}, {"$defs", {{"Args", ojson::parse(kWeather)}}},
                              {"required", ojson::array({"x"})}};
  auto beside = compile_reply(spec);
  ASSERT_FALSE(beside.is_ok());
  EXPECT_EQ(beside.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(beside.status().message().find("'required' beside a $ref"), std::string::npos) << beside.status().message();
}

}  // namespace
}  // namespace di::engine::constrain
