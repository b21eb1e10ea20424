// The Recipe section of the C ABI, linked against libdeepinfer.so as a user's program is:
// creation options, prepare outcomes, error details carrying the API error body, accessors.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "deepinfer.h"

namespace {

using json = nlohmann::json;

struct Recipe {
  di_recipe* r = nullptr;
  ~Recipe() { di_recipe_destroy(r); }
};

di_recipe* make_recipe(const std::string& options_json) {
  di_options* o = nullptr;
  EXPECT_EQ(di_options_create(&o, nullptr), DI_OK);
  EXPECT_EQ(di_options_update_json(o, options_json.data(), options_json.size(), nullptr), DI_OK);
  di_recipe* r = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_create(nullptr, 0, o, &r, &err), DI_OK) << di_error_message(err);
  di_error_destroy(err);
  di_options_destroy(o);
  return r;
}

TEST(RecipeCapi, PreparesAChatRequestAndExposesEveryPart) {
  Recipe rc{make_recipe(R"({"recipe_encoding":"dsv41","recipe_model":"flash",
                            "recipe_model_aliases":{"deepseek-chat":"flash"}})")};
  const std::string body = R"({"model":"deepseek-chat","stream":true,"temperature":0.2,"top_k":5,
    "seed":7,"stop":["END"],"thinking":{"type":"disabled"},
    "messages":[{"role":"user","content":"Say json"}],"response_format":{"type":"json_object"}})";
  di_prepared* p = nullptr;
  di_error* err = nullptr;
  ASSERT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, &err),
            DI_OK)
      << di_error_message(err);
  size_t len = 0;
  std::string prompt = di_prepared_prompt(p, &len);
  EXPECT_EQ(len, prompt.size());
  EXPECT_EQ(prompt.rfind("<｜begin▁of▁sentence｜><｜System｜>\n\n## Response Format:", 0), 0u);
  EXPECT_NE(prompt.find("<｜User｜>Say json<｜Assistant｜></think>"), std::string::npos);
  json s = json::parse(di_prepared_sampling_json(p, nullptr));
  EXPECT_EQ(s, json::parse(R"({"temperature":0.2,"top_k":5,"seed":7})"));
  EXPECT_EQ(json::parse(di_prepared_stop_sequences_json(p, nullptr)), json::parse(R"(["END"])"));
  EXPECT_EQ(di_prepared_stream(p), 1);
  EXPECT_EQ(json::parse(di_prepared_constraint_json(p, nullptr))["type"], "json_object");
  json po = json::parse(di_prepared_parser_options_json(p, nullptr));
  EXPECT_EQ(po["protocol"], "chat");
  EXPECT_EQ(po["prompt_opened_thinking"], false);
  EXPECT_EQ(po["json_object"], true);
  json info = json::parse(di_prepared_info_json(p, nullptr));
  EXPECT_EQ(info["model"], "flash");
  EXPECT_EQ(info["requested_model"], "deepseek-chat");
  EXPECT_EQ(info["prompt_tokens"], -1);
  size_t n = 99;
  EXPECT_EQ(di_prepared_token_ids(p, &n), nullptr);
  EXPECT_EQ(n, 0u);
  di_prepared_destroy(p);
}

TEST(RecipeCapi, RejectedRequestCarriesStatusAndProtocolErrorBody) {
  Recipe rc{make_recipe("{}")};
  const std::string body = R"({"model":"deepseek-v4","max_tokens":10,"messages":[]})";
  di_prepared* p = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_MESSAGES, body.data(), body.size(), &p, &err),
            DI_E_INVALID_ARG);
  EXPECT_EQ(p, nullptr);
  json d = json::parse(di_error_detail(err));
  EXPECT_EQ(d["status"], 400);
  EXPECT_EQ(d["body"]["type"], "error");
  EXPECT_EQ(d["body"]["error"]["type"], "invalid_request_error");
  EXPECT_EQ(std::string(di_error_message(err)), "messages: at least one message is required");
  di_error_destroy(err);
}

TEST(RecipeCapi, UnknownModelIsNotFoundWith404Body) {
  Recipe rc{make_recipe(R"({"recipe_model":"m","recipe_model_aliases":[]})")};
  const std::string body = R"({"model":"deepseek-chat","messages":[{"role":"user","content":"x"}]})";
  di_prepared* p = nullptr;
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, &err),
            DI_E_NOT_FOUND);
  json d = json::parse(di_error_detail(err));
  EXPECT_EQ(d["status"], 404);
  EXPECT_EQ(d["body"]["error"]["code"], "model_not_found");
  di_error_destroy(err);
}

TEST(RecipeCapi, BadArgumentsAndOptionsAreErrorsNotCrashes) {
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_create(nullptr, 0, nullptr, nullptr, &err), DI_E_INVALID_ARG);
  di_error_destroy(err);
  Recipe rc{make_recipe("{}")};
  di_prepared* p = nullptr;
  EXPECT_EQ(di_recipe_prepare(rc.r, 42, "{}", 2, &p, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_recipe_prepare(nullptr, DI_PROTOCOL_RESPONSES, "{}", 2, &p, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_RESPONSES, nullptr, 5, &p, nullptr), DI_E_INVALID_ARG);
  EXPECT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_RESPONSES, nullptr, 0, &p, nullptr), DI_E_INVALID_ARG);

  for (const char* bad : {R"({"recipe_encoding":"dsv5"})", R"({"recipe_image_policy":"vision"})",
                          R"({"recipe_image_policy":"maybe"})", R"({"recipe_context_length":0})",
                          R"({"recipe_model_aliases":{"a":1}})"}) {
    di_options* o = nullptr;
    ASSERT_EQ(di_options_create(&o, nullptr), DI_OK);
    ASSERT_EQ(di_options_update_json(o, bad, std::string(bad).size(), nullptr), DI_OK) << bad;
    di_recipe* r = nullptr;
    err = nullptr;
    EXPECT_EQ(di_recipe_create(nullptr, 0, o, &r, &err), DI_E_INVALID_ARG) << bad;
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(std::string(di_error_message(err)).find("recipe_"), std::string::npos) << bad;
    di_error_destroy(err);
    di_options_destroy(o);
  }
  // NULL-tolerant accessors and destroys.
  size_t len = 7;
  EXPECT_STREQ(di_prepared_prompt(nullptr, &len), "");
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(di_prepared_stream(nullptr), 0);
  di_prepared_destroy(nullptr);
  di_recipe_destroy(nullptr);
}

TEST(RecipeCapi, ContextOptionsRejectOrClampOnlyWithATokenizer) {
  // Without a tokenizer the budget cannot be measured: max_tokens passes through unchanged.
  Recipe rc{make_recipe(R"({"recipe_context_length":16})")};
  const std::string body =
      R"({"model":"deepseek-v4","max_tokens":1000,"messages":[{"role":"user","content":"x"}]})";
  di_prepared* p = nullptr;
  ASSERT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, nullptr),
            DI_OK);
  EXPECT_EQ(json::parse(di_prepared_sampling_json(p, nullptr))["max_tokens"], 1000);
  di_prepared_destroy(p);
}

}  // namespace
