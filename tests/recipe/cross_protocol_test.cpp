// One conversation sent through Chat Completions, Responses and Anthropic Messages must become
// the same prompt: the three parsers normalize to one Conversation. The Chat form is itself
// checked against DeepSeek's reference encoders (chat_golden_test.cpp).
#include <gtest/gtest.h>

#include "recipe/prepare/prepare.h"
#include "tests/recipe/test_images.h"

namespace di::recipe {
namespace {

std::string prompt_of(Encoding enc, Protocol p, const std::string& body) {
  RecipeConfig cfg;
  cfg.encoding = enc;
  auto r = prepare(cfg, {}, p, body);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r->prompt : "";
}

// system + tool round trip with reasoning, then a follow-up question; thinking on, effort high.
const char* kChat = R"({"model":"deepseek-v4","reasoning_effort":"high",
  "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city.",
    "parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}],
  "messages":[{"role":"system","content":"Be brief."},
    {"role":"user","content":"Weather in Paris?"},
    {"role":"assistant","content":"Checking.","reasoning_content":"Need the tool.",
     "tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"days\": 2}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"Sunny, 25°C"},
    {"role":"assistant","content":"Sunny."},
    {"role":"user","content":"And tomorrow?"}]})";

const char* kResponses = R"({"model":"deepseek-v4","instructions":"Be brief.","reasoning":{"effort":"high"},
  "tools":[{"type":"function","name":"get_weather","description":"Weather of a city.",
    "parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}],
  "input":[{"role":"user","content":"Weather in Paris?"},
    {"type":"reasoning","summary":[{"type":"summary_text","text":"Need the tool."}]},
    {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
    {"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\": \"Paris\", \"days\": 2}"},
    {"type":"function_call_output","call_id":"c1","output":"Sunny, 25°C"},
    {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sunny."}]},
    {"role":"user","content":[{"type":"input_text","text":"And tomorrow?"}]}]})";

const char* kMessages = R"({"model":"deepseek-v4","max_tokens":1024,"system":"Be brief.",
  "output_config":{"effort":"high"},
  "tools":[{"name":"get_weather","description":"Weather of a city.",
    "input_schema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}],
  "messages":[{"role":"user","content":"Weather in Paris?"},
    {"role":"assistant","content":[{"type":"thinking","thinking":"Need the tool.","signature":"x"},
      {"type":"text","text":"Checking."},
      {"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"Paris","days":2}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"Sunny, 25°C"}]},
    {"role":"assistant","content":"Sunny."},
    {"role":"user","content":[{"type":"text","text":"And tomorrow?"}]}]})";

TEST(CrossProtocol, SameConversationRendersTheSamePromptInEveryProtocol) {
  for (Encoding enc : {Encoding::kDsv4, Encoding::kDsv41, Encoding::kDsv32}) {
    std::string chat = prompt_of(enc, Protocol::kChatCompletions, kChat);
    ASSERT_FALSE(chat.empty());
    EXPECT_EQ(prompt_of(enc, Protocol::kResponses, kResponses), chat) << encoding_name(enc);
    EXPECT_EQ(prompt_of(enc, Protocol::kMessages, kMessages), chat) << encoding_name(enc);
  }
}

TEST(CrossProtocol, ThinkingOffRendersNonThinkingPromptEverywhere) {
  std::string chat = prompt_of(Encoding::kDsv41, Protocol::kChatCompletions,
      R"({"model":"deepseek-v4","thinking":{"type":"disabled"},"messages":[{"role":"user","content":"Hi"}]})");
  EXPECT_EQ(chat, "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>");
  EXPECT_EQ(prompt_of(Encoding::kDsv41, Protocol::kResponses,
                      R"({"model":"deepseek-v4","reasoning":{"effort":"none"},"input":"Hi"})"), chat);
  EXPECT_EQ(prompt_of(Encoding::kDsv41, Protocol::kMessages,
                      R"({"model":"deepseek-v4","thinking":{"type":"disabled"},"messages":[{"role":"user","content":"Hi"}]})"),
            chat);
}

TEST(CrossProtocol, RequiredToolChoicePrefillsTheDsmlBlockAndOpensParserInToolCalls) {
  RecipeConfig cfg;
  cfg.encoding = Encoding::kDsv41;
  auto r = prepare(cfg, {}, Protocol::kChatCompletions,
      R"({"model":"deepseek-v4","tool_choice":"required","tools":[{"type":"function","function":{"name":"f"}}],
          "messages":[{"role":"user","content":"go"}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const std::string tail = "<｜Assistant｜></think>\n\n<｜DSML｜ calls>\n";
  ASSERT_GE(r->prompt.size(), tail.size());
  EXPECT_EQ(r->prompt.substr(r->prompt.size() - tail.size()), tail);
  EXPECT_TRUE(r->parser.prompt_opened_tool_calls);
  EXPECT_FALSE(r->conversation.thinking);  // the default gave way to the forced tool
}

TEST(CrossProtocol, ImagesFollowTheImagePolicy) {
  // A data URL: the vision policy resolves (decodes and fits) every image while preparing.
  const std::string url = "data:image/png;base64," + di::testing::base64(di::testing::read_binary(
                                                         std::string(DI_FIXTURES_DIR) + "/recipe_image/rgb.png"));
  const std::string body = R"({"model":"deepseek-v4","thinking":{"type":"disabled"},"messages":[{"role":"user","content":[
      {"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":")" + url + R"("}}]}]})";
  RecipeConfig cfg;
  cfg.encoding = Encoding::kDsv41;
  auto plain = prepare(cfg, {}, Protocol::kChatCompletions, body);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->prompt, "<｜begin▁of▁sentence｜><｜User｜>What is this?\n\n[Unsupported Image]<｜Assistant｜></think>");
  EXPECT_TRUE(plain->images.empty());
  cfg.image_policy = ImagePolicy::kVision;
  auto vision = prepare(cfg, {}, Protocol::kChatCompletions, body);
  ASSERT_TRUE(vision.is_ok()) << vision.status().message();
  EXPECT_EQ(vision->prompt, "<｜begin▁of▁sentence｜><｜User｜>What is this?\n\n<｜deepseek_image｜><｜Assistant｜></think>");
  ASSERT_EQ(vision->images.size(), 1u);
  EXPECT_EQ(vision->images[0].url, url);
  ASSERT_EQ(vision->image_data.size(), 1u);
  cfg.image_policy = ImagePolicy::kReject;
  auto rejected = prepare(cfg, {}, Protocol::kChatCompletions, body);
  EXPECT_FALSE(rejected.is_ok());
}

}  // namespace
}  // namespace di::recipe
