// di_submit_prepared on the bundled tiny model, through libdeepinfer.so as a user links it: a
// recipe-prepared chat request generates exactly what di_submit gives for the same token ids
// and sampling options, its chunks parse into the protocol's response, and bad input is refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/cli_engine/tiny_engine.h"
#include "tests/common/capi_calls.h"

namespace {

using di_test::error_text;
using di_test::for_each_chunk;
using nlohmann::json;

struct Handles {
  di_engine* engine = nullptr;
  di_recipe* recipe = nullptr;
};

// Tokens (and parsed events) of one completion pulled with di_poll_chunk.
struct Outcome {
  std::vector<int32_t> tokens;
  int32_t finish = DI_FINISH_NONE;
  json response;
};

Outcome drain(di_request* r, di_parser* parser) {
  Outcome out;
  for_each_chunk(r, [&](const di_chunk& c) {
    out.tokens.insert(out.tokens.end(), c.token_ids, c.token_ids + c.num_tokens);
    if (c.finish_reason != DI_FINISH_NONE) out.finish = c.finish_reason;
    if (parser) {
      EXPECT_NE(di_parse_push_chunk(parser, &c, nullptr, nullptr, nullptr), DI_E_INVALID_ARG);
    }
  });
  if (parser) {
    char* body = nullptr;
    size_t len = 0;
    EXPECT_EQ(di_parse_response(parser, &body, &len, nullptr), DI_OK);
    if (body) out.response = json::parse(std::string(body, len));
    di_free(body);
  }
  return out;
}

class PreparedSubmit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NO_FATAL_FAILURE(di_test::open_tiny_engine("di-prepared", &dir_, &h_.engine));
    di_error* err = nullptr;
    ASSERT_EQ(di_recipe_create(dir_->data(), dir_->size(), nullptr, &h_.recipe, &err), DI_OK) << error_text(err);
  }
  static void TearDownTestSuite() {
    di_recipe_destroy(h_.recipe);
    di_test::close_tiny_engine(dir_, h_.engine);
  }

  static di_prepared* prepare(const json& body, di_status want = DI_OK) {
    const std::string s = body.dump();
    di_prepared* p = nullptr;
    di_error* err = nullptr;
    EXPECT_EQ(di_recipe_prepare(h_.recipe, DI_PROTOCOL_CHAT_COMPLETIONS, s.data(), s.size(), &p, &err), want)
        << error_text(err);
    return p;
  }

  static std::string* dir_;
  static Handles h_;
};
std::string* PreparedSubmit::dir_ = nullptr;
Handles PreparedSubmit::h_;

json chat(const json& sampling) {
  json body = {{"model", "deepseek-chat"},
               {"messages", json::array({{{"role", "user"}, {"content", "Name three rivers."}}})}};
  body.update(sampling);
  return body;
}

// The same ids and sampling options through di_submit.
Outcome submit_ids(di_engine* e, const di_prepared* p) {
  size_t n = 0, len = 0;
  const int32_t* ids = di_prepared_token_ids(p, &n);
  const char* sampling = di_prepared_sampling_json(p, &len);
  di_options* o = nullptr;
  EXPECT_EQ(di_options_create(&o, nullptr), DI_OK);
  EXPECT_EQ(di_options_update_json(o, sampling, len, nullptr), DI_OK) << sampling;
  di_request* r = nullptr;
  EXPECT_EQ(di_submit(e, ids, n, o, nullptr, nullptr, &r, nullptr), DI_OK);
  di_options_destroy(o);
  Outcome run = drain(r, nullptr);
  di_request_destroy(r);
  return run;
}

TEST_F(PreparedSubmit, GreedyAndSeededRequestsEqualDiSubmitOfTheSameIds) {
  for (const json& sampling : {json{{"temperature", 0}, {"max_tokens", 12}},
                               json{{"temperature", 0.9}, {"top_p", 0.9}, {"seed", 11}, {"max_tokens", 12}}}) {
    di_prepared* p = prepare(chat(sampling));
    ASSERT_TRUE(p);
    di_request* r = nullptr;
    di_error* err = nullptr;
    ASSERT_EQ(di_submit_prepared(h_.engine, p, nullptr, nullptr, &r, &err), DI_OK) << error_text(err);
    const Outcome got = drain(r, nullptr);
    di_request_destroy(r);
    const Outcome want = submit_ids(h_.engine, p);
    di_prepared_destroy(p);
    EXPECT_FALSE(got.tokens.empty()) << sampling.dump();
    EXPECT_LE(got.tokens.size(), 12u);
    EXPECT_EQ(got.tokens, want.tokens) << sampling.dump();
    EXPECT_EQ(got.finish, want.finish);
  }
}

TEST_F(PreparedSubmit, ChunksParseIntoAChatCompletionWithUsage) {
  di_prepared* p = prepare(chat({{"temperature", 0}, {"max_tokens", 10}}));
  ASSERT_TRUE(p);
  size_t len = 0;
  const char* opts = di_prepared_parser_options_json(p, &len);
  di_parser* parser = nullptr;
  ASSERT_EQ(di_parser_create_from_json(opts, len, &parser, nullptr), DI_OK) << opts;
  di_request* r = nullptr;
  ASSERT_EQ(di_submit_prepared(h_.engine, p, nullptr, nullptr, &r, nullptr), DI_OK);
  const Outcome run = drain(r, parser);
  di_request_destroy(r);
  di_parser_destroy(parser);
  size_t n = 0;
  di_prepared_token_ids(p, &n);
  di_prepared_destroy(p);
  ASSERT_TRUE(run.response.is_object());
  EXPECT_EQ(run.response["object"], "chat.completion") << run.response.dump();
  EXPECT_EQ(run.response["usage"]["prompt_tokens"], static_cast<int64_t>(n));
  EXPECT_EQ(run.response["usage"]["completion_tokens"], static_cast<int64_t>(run.tokens.size()));
  const std::string finish = run.response["choices"][0]["finish_reason"];
  EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
}

TEST_F(PreparedSubmit, BadInputIsAClearError) {
  di_request* r = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_submit_prepared(h_.engine, nullptr, nullptr, nullptr, &r, &err), DI_E_INVALID_ARG);
  EXPECT_FALSE(error_text(err).empty());
  err = nullptr;
  di_prepared* p = prepare(chat({{"max_tokens", 4}}));
  ASSERT_TRUE(p);
  EXPECT_EQ(di_submit_prepared(nullptr, p, nullptr, nullptr, &r, &err), DI_E_INVALID_ARG);
  di_error_destroy(err);
  err = nullptr;
  EXPECT_EQ(di_submit_prepared(h_.engine, p, nullptr, nullptr, nullptr, &err), DI_E_INVALID_ARG);
  di_error_destroy(err);
  di_prepared_destroy(p);

  // A recipe without a tokenizer prepares text only: there are no ids to submit.
  di_recipe* textual = nullptr;
  ASSERT_EQ(di_recipe_create("", 0, nullptr, &textual, nullptr), DI_OK);
  const std::string body = chat({{"max_tokens", 4}}).dump();
  ASSERT_EQ(di_recipe_prepare(textual, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, nullptr), DI_OK);
  err = nullptr;
  EXPECT_EQ(di_submit_prepared(h_.engine, p, nullptr, nullptr, &r, &err), DI_E_INVALID_ARG);
  EXPECT_NE(error_text(err).find("token ids"), std::string::npos);
  di_prepared_destroy(p);
  di_recipe_destroy(textual);
}

}  // namespace
