// Request bodies built to crash or stall the parsers (issue 25, rows 1, 2, 6 and 12): nesting
// hidden in strings re-parsed later, nested regex/EBNF groups, objects with 10^5 keys. Each must
// end as a clear refusal (or an answer) without recursion as deep as the client nests, and in
// time linear in the body.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/constrain/ebnf_compiler.h"
#include "engine/constrain/regex_compiler.h"
#include "recipe/encoding/json_text.h"
#include "recipe/prepare/prepare.h"
#include "server/error_response.h"

namespace di {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// Far deeper than any thread's stack survives when each level costs a few frames.
constexpr int kHostileDepth = 50000;

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

json error_body(const Status& s) {
  const json d = json::parse(s.detail(), nullptr, false);
  return d.is_object() ? d : json::object();
}

const recipe::RecipeConfig kConfig;

// The error detail of a body prepare must reject; {} (and a failure) when it is accepted.
json rejection(recipe::Protocol protocol, const std::string& body) {
  auto r = recipe::prepare(kConfig, {}, protocol, body);
  if (r.is_ok()) {
    ADD_FAILURE() << "accepted: " << body.substr(0, 80);
    return json::object();
  }
  return error_body(r.status());
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(HostileJson, ChatToolCallArgumentsNestedDeeplyAreA400) {
  const std::string args = "{\"a\":" + nested_arrays(kHostileDepth) + "}";
  const json body = {{"model", "deepseek-v4"},
                     {"messages",
                      {{{"role", "user"}, {"content", "hi"}},
                       {{"role", "assistant"},
                        {"tool_calls",
                         {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", args}}}}}}},
                       {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "r"}}}}};
  const json d = rejection(recipe::Protocol::kChatCompletions, body.dump());
  EXPECT_EQ(d["status"], 400);
  EXPECT_EQ(d["body"]["error"]["type"], "invalid_request_error");
  EXPECT_EQ(d["body"]["error"]["code"], "json_too_deep");
  EXPECT_EQ(d["body"]["error"]["param"], "messages[1].tool_calls[0].function.arguments");
}

TEST(HostileJson, ResponsesFunctionCallArgumentsNestedDeeplyAreA400) {
  const std::string args = "{\"a\":" + nested_arrays(kHostileDepth) + "}";
  const json body = {{"model", "deepseek-v4"},
                     {"input",
                      {{{"role", "user"}, {"content", "hi"}},
                       {{"type", "function_call"}, {"call_id", "c1"}, {"name", "f"}, {"arguments", args}},
                       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "r"}}}}};
  const json d = rejection(recipe::Protocol::kResponses, body.dump());
  EXPECT_EQ(d["status"], 400);
  EXPECT_EQ(d["body"]["error"]["code"], "json_too_deep");
}

TEST(HostileJson, BodyNestedDeeplyIsA400WithItsCode) {
  const json d = rejection(recipe::Protocol::kChatCompletions, "{\"x\":" + nested_arrays(kHostileDepth) + "}");
  EXPECT_EQ(d["body"]["error"]["code"], "json_too_deep");
  EXPECT_EQ(d["body"]["error"]["message"], "request body: JSON nested deeper than 128 levels");
}

// nlohmann's own ordered parse took 23.6 s for this (quadratic); linear takes well under 1 s.
// The bound is loose for a loaded machine; quadratic stays far above it.
TEST(HostileJson, AnObjectWithTwoHundredThousandKeysParsesInLinearTime) {
  std::string big = "{";
  for (int i = 0; i < 200000; ++i) big += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  big += "}";
  const std::string body = R"({"model":"deepseek-v4","messages":[{"role":"user","content":"hi"}],"unknown_field":)" + big + "}";
  const auto t0 = Clock::now();
  auto r = recipe::prepare(kConfig, {}, recipe::Protocol::kChatCompletions, body);
  EXPECT_LT(seconds_since(t0), 5.0);
  (void)r;  // accepted or refused for the unknown field: either is fine, in time
}

TEST(HostileJson, LogitBiasWithOneHundredThousandEntriesIsHandledInLinearTime) {
  std::string lb = "{";
  for (int i = 0; i < 100000; ++i) lb += (i ? ",\"" : "\"") + std::to_string(i) + "\":1";
  lb += "}";
  const std::string body = R"({"model":"deepseek-v4","messages":[{"role":"user","content":"hi"}],"logit_bias":)" + lb + "}";
  const auto t0 = Clock::now();
  auto r = recipe::prepare(kConfig, {}, recipe::Protocol::kChatCompletions, body);
  EXPECT_LT(seconds_since(t0), 5.0);
  (void)r;
}

TEST(JsonText, KeepsNlohmannsRulesForRepeatedKeysAndTrailingBytes) {
  const std::string text = R"({"a":1,"b":{"c":[1,2,{"d":null}]},"a":3})";
  const auto r = recipe::parse_json_text(text, 128);
  ASSERT_EQ(r.error, recipe::JsonTextResult::Error::kNone);
  EXPECT_EQ(r.value.dump(), ordered_json::parse(text).dump());
  EXPECT_EQ(recipe::parse_json_text(std::string("{\"a\":1}\0junk", 12), 128).error,
            recipe::JsonTextResult::Error::kSyntax);
  EXPECT_EQ(recipe::parse_json_text("[[1]]", 2).error, recipe::JsonTextResult::Error::kNone);
  EXPECT_EQ(recipe::parse_json_text("[[[1]]]", 2).error, recipe::JsonTextResult::Error::kTooDeep);
}

TEST(HostileGrammar, RegexWithTenThousandNestedGroupsIsALimitNotACrash) {
  const std::string p = std::string(10000, '(') + "a" + std::string(10000, ')');
  auto g = engine::constrain::compile_regex(p);
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kLimit);
  EXPECT_NE(g.status().message().find("nested deeper than"), std::string::npos) << g.status().message();
}

TEST(HostileGrammar, RegexWithStackedQuantifiersIsALimitNotACrash) {
  auto g = engine::constrain::compile_regex("a" + std::string(100000, '?'));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kLimit);
}

TEST(HostileGrammar, RegexNestedWithinTheBoundStillCompiles) {
  auto g = engine::constrain::compile_regex(std::string(20, '(') + "ab" + std::string(20, ')') + "+");
  EXPECT_TRUE(g.is_ok()) << g.status().message();
}

TEST(HostileGrammar, EbnfWithTenThousandNestedGroupsIsALimitNotACrash) {
  auto g = engine::constrain::compile_ebnf("root ::= " + std::string(10000, '(') + "\"a\"" + std::string(10000, ')'));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kLimit);
  auto q = engine::constrain::compile_ebnf("root ::= \"a\"" + std::string(100000, '?'));
  ASSERT_FALSE(q.is_ok());
  EXPECT_EQ(q.status().code(), StatusCode::kLimit);
}

// Row 12: only a prompt over the context is context_length_exceeded.
TEST(EngineLimitCodes, NameTheLimitThatWasHit) {
  // {the engine's DI_E_LIMIT message, the code the server answers with}
  const std::pair<const char*, const char*> cases[] = {
      {"prompt: 9000 tokens + max_tokens 100 exceed max_model_len 4096", "context_length_exceeded"},
      {"grammar: over the compile work budget of 20000000 units", "grammar_too_complex"},
      {"constraint: json_schema: #/properties/a: schema nesting deeper than 48", "grammar_too_deep"},
      {"regex: groups and quantifiers nested deeper than 64 (at offset 64)", "grammar_too_deep"},
      {"n: 9 completions exceed max_num_seqs 8", "n_too_large"},
  };
  for (const auto& [message, code] : cases) EXPECT_EQ(server::engine_limit_code(message), code) << message;
}

}  // namespace
}  // namespace di
