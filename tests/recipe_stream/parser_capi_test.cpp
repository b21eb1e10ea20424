// The Parser section of the C ABI, linked against libdeepinfer.so as a user's program is: events
// arrive through the callback in order, the final body comes back, misuse is an error not a crash.
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

di_parser* make(const std::string& options) {
  di_parser* p = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_parser_create_from_json(options.data(), options.size(), &p, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  return p;
}

di_parse_chunk text_chunk(const std::string& s, int32_t finish = DI_PARSE_FINISH_NONE) {
  di_parse_chunk c{};
  c.struct_size = sizeof(c);
  c.text = s.data();
  c.text_len = s.size();
  c.finish_reason = finish;
  c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;
  return c;
}

TEST(ParserCapi, MessagesEventsArriveThroughTheCallbackAndTheBodyMatches) {
  di_parser* p = make(R"({"protocol":"messages","prompt_opened_thinking":true,"request_id":"x",
                          "tools":[{"name":"get_weather"}],"model":"m"})");
  ASSERT_NE(p, nullptr);
  Collected got;
  const std::string a = "Let me look.</think>\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n";
  const std::string b = "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>";
  di_parse_chunk c1 = text_chunk(a);
  c1.prompt_tokens = 20;
  c1.cached_prompt_tokens = 8;
  EXPECT_EQ(di_parse_push(p, &c1, collect, &got, nullptr), DI_OK);
  di_parse_chunk c2 = text_chunk(b, DI_PARSE_FINISH_STOP);
  c2.completion_tokens = 30;
  EXPECT_EQ(di_parse_push(p, &c2, collect, &got, nullptr), DI_END_OF_STREAM);
  ASSERT_FALSE(got.events.empty());
  EXPECT_EQ(got.events.front().first, "message_start");
  EXPECT_EQ(got.events.back().first, "message_stop");
  for (auto& [name, data] : got.events) EXPECT_EQ(json::parse(data)["type"], name);

  char* body = nullptr;
  size_t len = 0;
  ASSERT_EQ(di_parse_response(p, &body, &len, nullptr), DI_OK);
  json r = json::parse(std::string(body, len));
  di_free(body);
  EXPECT_EQ(r["stop_reason"], "tool_use");
  EXPECT_EQ(r["content"][0]["thinking"], "Let me look.");
  EXPECT_EQ(r["content"][1]["input"], json({{"city", "Paris"}}));
  EXPECT_EQ(r["usage"]["input_tokens"], 12);
  EXPECT_EQ(r["usage"]["cache_read_input_tokens"], 8);
  EXPECT_EQ(r["usage"]["output_tokens"], 30);

  // After the end nothing more is delivered.
  const size_t n = got.events.size();
  EXPECT_EQ(di_parse_push(p, &c1, collect, &got, nullptr), DI_END_OF_STREAM);
  EXPECT_EQ(di_parse_finish(p, collect, &got, nullptr), DI_END_OF_STREAM);
  EXPECT_EQ(got.events.size(), n);
  di_parser_destroy(p);
}

TEST(ParserCapi, ChatStreamEndsWithDoneAfterFinish) {
  di_parser* p = make(R"({"protocol":"chat","stream":true,"include_usage":true})");
  Collected got;
  di_parse_chunk c = text_chunk("hello");
  di_parse_push(p, &c, collect, &got, nullptr);
  EXPECT_EQ(di_parse_finish(p, collect, &got, nullptr), DI_END_OF_STREAM);
  ASSERT_GE(got.events.size(), 3u);
  EXPECT_EQ(got.events.back().second, "[DONE]");
  EXPECT_TRUE(json::parse(got.events[got.events.size() - 2].second)["usage"].is_object());
  di_parser_destroy(p);
}

TEST(ParserCapi, BadOptionsAndMisuseAreErrorsNamingTheProblem) {
  di_parser* p = nullptr;
  di_error* err = nullptr;
  const std::string bad = R"({"protocol":"smtp"})";
  EXPECT_EQ(di_parser_create_from_json(bad.data(), bad.size(), &p, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("protocol"), std::string::npos);
  di_error_destroy(err);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(di_parser_create_from_json("{", 1, &p, nullptr), DI_E_PARSE);
  EXPECT_EQ(di_parser_create_from_json("{}", 2, nullptr, nullptr), DI_E_INVALID_ARG);

  p = make("{}");
  di_parse_chunk c = text_chunk("x");
  c.struct_size = 4;
  err = nullptr;
  EXPECT_EQ(di_parse_push(p, &c, nullptr, nullptr, &err), DI_E_INVALID_ARG);
  EXPECT_NE(std::string(di_error_message(err)).find("struct_size"), std::string::npos);
  di_error_destroy(err);
  c = text_chunk("x");
  c.text = nullptr;
  EXPECT_EQ(di_parse_push(p, &c, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_parse_push(p, nullptr, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  char* body = nullptr;
  EXPECT_EQ(di_parse_response(p, &body, nullptr, nullptr), DI_E_STATE);
  EXPECT_EQ(di_parse_finish(nullptr, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  di_parser_destroy(p);
  di_parser_destroy(nullptr);
}

TEST(ParserCapi, EngineErrorBecomesTheResponsesErrorEvents) {
  di_parser* p = make(R"({"protocol":"responses"})");
  Collected got;
  di_parse_chunk c = text_chunk("partial");
  di_parse_push(p, &c, collect, &got, nullptr);
  di_parse_chunk e = text_chunk("", DI_PARSE_FINISH_ERROR);
  const std::string msg = "out of KV blocks";
  e.error_message = msg.data();
  e.error_message_len = msg.size();
  EXPECT_EQ(di_parse_push(p, &e, collect, &got, nullptr), DI_END_OF_STREAM);
  EXPECT_EQ(got.events.back().first, "response.failed");
  const json failed = json::parse(got.events.back().second)["response"];
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["error"]["message"], msg);
  EXPECT_EQ(failed["error"]["code"], "server_error");
  // Like OpenAI's API: the failed response ends the stream, with no stream-level `error` event
  // (the official SDKs throw on one instead of returning the failed response).
  for (const auto& [event, data] : got.events) EXPECT_NE(event, "error") << data;
  char* body = nullptr;
  ASSERT_EQ(di_parse_response(p, &body, nullptr, nullptr), DI_OK);
  EXPECT_NE(std::string(body).find(msg), std::string::npos);
  di_free(body);
  di_parser_destroy(p);
}

TEST(ParserCapi, EngineChunksFeedTheParserDirectly) {
  // The finish codes are shared with the engine, so a di_chunk goes in as it comes out.
  static_assert(DI_PARSE_FINISH_STOP == DI_FINISH_STOP && DI_PARSE_FINISH_LENGTH == DI_FINISH_LENGTH &&
                DI_PARSE_FINISH_STOP_SEQUENCE == DI_FINISH_STOP_SEQUENCE &&
                DI_PARSE_FINISH_CANCELLED == DI_FINISH_CANCELLED && DI_PARSE_FINISH_ERROR == DI_FINISH_ERROR);
  di_parser* p = make(R"({"protocol":"chat","prompt_opened_thinking":true,
                          "control_tokens":{"think_end":128822}})");
  Collected got;
  const int32_t ids1[] = {10, 11};
  const int32_t ids2[] = {128822};
  const int32_t ids3[] = {12};
  const std::string t1 = "why </think>", t2 = "</think>", t3 = "ok";
  const int32_t* ids[] = {ids1, ids2, ids3};
  const size_t nids[] = {2, 1, 1};
  const std::string* texts[] = {&t1, &t2, &t3};
  for (int i = 0; i < 3; ++i) {
    di_chunk c{};
    c.struct_size = sizeof(c);
    c.token_ids = ids[i];
    c.num_tokens = nids[i];
    c.text = texts[i]->data();
    c.text_len = texts[i]->size();
    c.prompt_tokens = 9;
    c.cached_prompt_tokens = 0;
    c.completion_tokens = i + 2;
    c.finish_reason = i == 2 ? DI_FINISH_STOP : DI_FINISH_NONE;
    c.error_message = "";
    EXPECT_EQ(di_parse_push_chunk(p, &c, collect, &got, nullptr), i == 2 ? DI_END_OF_STREAM : DI_OK);
  }
  char* body = nullptr;
  ASSERT_EQ(di_parse_response(p, &body, nullptr, nullptr), DI_OK);
  json r = json::parse(body);
  di_free(body);
  // The typed "</think>" is reasoning text; the control token ended the reasoning.
  EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], "why </think>");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "ok");
  EXPECT_EQ(r["usage"]["completion_tokens"], 4);
  di_chunk small{};
  small.struct_size = 8;
  EXPECT_EQ(di_parse_push_chunk(p, &small, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
  di_parser_destroy(p);
}

}  // namespace
