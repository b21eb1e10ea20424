// di_parser_create: a parser configured from a di_prepared, through libdeepinfer.so as a user's
// program links it. Its options are the prepared ones (same events as a parser made from
// di_prepared_parser_options_json), overrides replace them, and with a recipe tokenizer token
// ids are decoded by the parser itself: the result does not depend on how ids are chunked and a
// `</think>` typed as plain tokens stays text.
#include <gtest/gtest.h>

#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/common/capi_calls.h"
#include "tests/recipe_stream/tiny_deepseek_tokenizer.h"

namespace {

using nlohmann::json;
using Events = std::vector<std::pair<std::string, std::string>>;

void collect(void* user, const char* event, size_t event_len, const char* data, size_t data_len) {
  static_cast<Events*>(user)->push_back({std::string(event, event_len), std::string(data, data_len)});
}

di_recipe* make_recipe(const std::string& tokenizer_dir, const std::string& options) {
  di_options* o = nullptr;
  EXPECT_EQ(di_options_create(&o, nullptr), DI_OK);
  EXPECT_EQ(di_options_update_json(o, options.data(), options.size(), nullptr), DI_OK);
  di_recipe* r = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_create(tokenizer_dir.data(), tokenizer_dir.size(), o, &r, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  di_options_destroy(o);
  return r;
}

di_prepared* prepare(di_recipe* r, int32_t protocol, const std::string& body) {
  di_prepared* p = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_prepare(r, protocol, body.data(), body.size(), &p, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  return p;
}

di_parser* parser_for(const di_prepared* p, const std::string& overrides) {
  di_parser* parser = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_parser_create(p, overrides.data(), overrides.size(), &parser, &err), DI_OK)
      << di_error_message(err);
  di_error_destroy(err);
  return parser;
}

di_parse_chunk chunk(const std::string& text, const std::vector<int32_t>& ids, int32_t finish) {
  di_parse_chunk c{};
  c.struct_size = sizeof(c);
  c.text = text.data();
  c.text_len = text.size();
  c.token_ids = ids.empty() ? nullptr : ids.data();
  c.num_token_ids = ids.size();
  c.finish_reason = finish;
  c.prompt_tokens = c.cached_prompt_tokens = c.completion_tokens = -1;
  return c;
}

json response_of(di_parser* p) {
  char* body = nullptr;
  size_t len = 0;
  EXPECT_EQ(di_parse_response(p, &body, &len, nullptr), DI_OK);
  json r = json::parse(std::string(body, len));
  di_free(body);
  return r;
}

using di_test::encode;

const std::string kChatBody = R"({"model":"deepseek-v4","stream":true,"stop":["END"],
    "messages":[{"role":"user","content":"Weather?"}],
    "tools":[{"type":"function","function":{"name":"get_weather",
              "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]})";

TEST(ParserFromPrepared, SameEventsAsAParserFromThePreparedOptionsJson) {
  di_recipe* r = make_recipe("", R"({"recipe_encoding":"dsv41"})");
  di_prepared* p = prepare(r, DI_PROTOCOL_CHAT_COMPLETIONS, kChatBody);
  const std::string overrides = R"({"request_id":"r1","created":7,"system_fingerprint":"fp"})";
  di_parser* a = parser_for(p, overrides);
  json opts = json::parse(di_prepared_parser_options_json(p, nullptr));
  opts.update(json::parse(overrides));
  const std::string opts_text = opts.dump();
  di_parser* b = nullptr;
  ASSERT_EQ(di_parser_create_from_json(opts_text.data(), opts_text.size(), &b, nullptr), DI_OK);
  di_prepared_destroy(p);  // the parser does not need it any more
  di_recipe_destroy(r);

  const std::string out =
      "Need the tool.</think>\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n"
      "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n"
      "</｜DSML｜ invoke>\n</｜DSML｜ calls>";
  Events ea, eb;
  for (auto [parser, events] : {std::pair{a, &ea}, std::pair{b, &eb}}) {
    di_parse_chunk c = chunk(out, {}, DI_PARSE_FINISH_STOP);
    EXPECT_EQ(di_parse_push(parser, &c, collect, events, nullptr), DI_END_OF_STREAM);
  }
  EXPECT_EQ(ea, eb);
  json ra = response_of(a);
  EXPECT_EQ(ra, response_of(b));
  EXPECT_EQ(ra["id"], "chatcmpl-r1");
  EXPECT_EQ(ra["created"], 7);
  EXPECT_EQ(ra["system_fingerprint"], "fp");
  EXPECT_EQ(ra["model"], "deepseek-v4");
  const json& m = ra["choices"][0]["message"];
  EXPECT_EQ(m["reasoning_content"], "Need the tool.");  // thinking is the default
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Paris"}}));
  EXPECT_EQ(ra["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(ea.back().second, "[DONE]");  // the request streams
  di_parser_destroy(a);
  di_parser_destroy(b);
}

TEST(ParserFromPrepared, TokenIdsAreDecodedWithTheRecipeTokenizerWhateverTheChunking) {
  char tmpl[] = "/tmp/di_parser_tok_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = di::testing::write_tiny_deepseek_tokenizer(tmpl);
  di_recipe* r = make_recipe(dir, R"({"recipe_encoding":"dsv4"})");
  di_tokenizer* t = nullptr;
  ASSERT_EQ(di_tokenizer_create(dir.data(), dir.size(), &t, nullptr), DI_OK);
  di_prepared* p = prepare(r, DI_PROTOCOL_CHAT_COMPLETIONS, kChatBody);
  json po = json::parse(di_prepared_parser_options_json(p, nullptr));
  EXPECT_EQ(po["control_tokens"]["think_end"], di::testing::tiny_token_id("</think>"));

  // Reasoning holding a typed "</think>" (plain tokens), the control token, then an answer
  // cut by the stop string "END".
  std::vector<int32_t> ids = encode(t, "why </think> so", 0);
  for (int32_t id : encode(t, "</think>Sunny.END and more", DI_TOKENIZE_ADDED_TOKENS)) ids.push_back(id);
  ids.push_back(di::testing::tiny_token_id("<｜end▁of▁sentence｜>"));

  json reference;
  for (size_t per : {size_t{1}, size_t{2}, size_t{5}, ids.size()}) {
    di_parser* parser = parser_for(p, R"({"request_id":"x","created":1})");
    Events ev;
    for (size_t i = 0; i < ids.size(); i += per) {
      std::vector<int32_t> part(ids.begin() + i, ids.begin() + std::min(ids.size(), i + per));
      // The text is deliberately wrong: with a tokenizer the parser decodes the ids itself.
      di_parse_chunk c = chunk("?", part, DI_PARSE_FINISH_NONE);
      di_parse_push(parser, &c, collect, &ev, nullptr);
    }
    di_parse_finish(parser, collect, &ev, nullptr);
    json resp = response_of(parser);
    const json& m = resp["choices"][0]["message"];
    EXPECT_EQ(m["reasoning_content"], "why </think> so") << per;
    EXPECT_EQ(m["content"], "Sunny.") << per;
    EXPECT_EQ(resp["choices"][0]["finish_reason"], "stop") << per;
    resp.erase("usage");  // ids after the stop string differ with the chunking
    if (reference.is_null()) reference = resp;
    EXPECT_EQ(resp, reference) << per;
    di_parser_destroy(parser);
  }
  di_prepared_destroy(p);
  di_tokenizer_destroy(t);
  di_recipe_destroy(r);
}

TEST(ParserFromPrepared, BadArgumentsAndOverridesAreNamedErrors) {
  di_recipe* r = make_recipe("", "{}");
  di_prepared* p = prepare(r, DI_PROTOCOL_MESSAGES,
                           R"({"model":"deepseek-v4","max_tokens":5,"messages":[{"role":"user","content":"x"}]})");
  di_parser* parser = nullptr;
  EXPECT_EQ(di_parser_create(nullptr, nullptr, 0, &parser, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_parser_create(p, nullptr, 0, nullptr, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_parser_create(p, nullptr, 3, &parser, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_parser_create(p, "{", 1, &parser, nullptr), DI_E_PARSE);
  const std::pair<std::string, std::string> bad[] = {
      {"[1]", "overrides_json"}, {R"({"bogus":1})", "bogus"}, {R"({"request_id":5})", "request_id"}};
  for (const auto& [text, named] : bad) {
    di_error* err = nullptr;
    EXPECT_EQ(di_parser_create(p, text.data(), text.size(), &parser, &err), DI_E_INVALID_ARG) << text;
    EXPECT_NE(std::string(di_error_message(err)).find(named), std::string::npos) << di_error_message(err);
    di_error_destroy(err);
  }
  EXPECT_EQ(parser, nullptr);
  // NULL / empty overrides: the prepared options as they are (a Messages parser here).
  ASSERT_EQ(di_parser_create(p, nullptr, 0, &parser, nullptr), DI_OK);
  Events ev;
  di_parse_finish(parser, collect, &ev, nullptr);
  EXPECT_EQ(ev.front().first, "message_start");
  di_parser_destroy(parser);
  di_prepared_destroy(p);
  di_recipe_destroy(r);
}

}  // namespace
