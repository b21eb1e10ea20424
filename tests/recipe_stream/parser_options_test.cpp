// ParserOptions JSON form: round trip, defaults derived from other keys, errors naming the key.
#include <gtest/gtest.h>

#include "recipe/stream/parser_options.h"

namespace di::recipe {
namespace {

using nlohmann::json;

TEST(ParserOptions, RoundTripsThroughJson) {
  ParserOptions o;
  o.protocol = Protocol::kMessages;
  o.encoding = EncodingVersion::kDsv4;
  o.prompt_opened_thinking = true;
  o.thinking = true;
  o.tools.push_back({"get_weather", json{{"type", "object"}}, true, "function"});
  o.parse_tool_calls = true;
  o.stop_sequences = {"END", "猫猫"};
  o.stream = true;
  o.model = "m";
  o.request_id = "r1";
  o.created = 17;
  o.control_tokens.think_end = 128822;
  json j = parser_options_to_json(o);
  auto back = parser_options_from_json(j);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(parser_options_to_json(*back), j);
}

TEST(ParserOptions, ThinkingAndToolParsingDefaultFromOtherKeys) {
  auto o = parser_options_from_json(
      json::parse(R"({"prompt_opened_thinking":true,"tools":[{"name":"f"}]})"));
  ASSERT_TRUE(o.is_ok());
  EXPECT_TRUE(o->thinking);
  EXPECT_TRUE(o->parse_tool_calls);
  EXPECT_EQ(o->tools[0].parameters, json::object());
}

TEST(ParserOptions, ErrorsNameTheKey) {
  auto bad = [](const char* text) {
    auto o = parser_options_from_json(json::parse(text));
    EXPECT_FALSE(o.is_ok()) << text;
    return o.is_ok() ? std::string() : o.status().message();
  };
  EXPECT_NE(bad(R"({"protocol":"grpc"})").find("protocol"), std::string::npos);
  EXPECT_NE(bad(R"({"stop":[1]})").find("stop[0]"), std::string::npos);
  EXPECT_NE(bad(R"({"tools":[{"name":""}]})").find("tools[0].name"), std::string::npos);
  EXPECT_NE(bad(R"({"thinkng":true})").find("thinkng"), std::string::npos);
  EXPECT_NE(bad(R"({"control_tokens":{"dsml":"x"}})").find("control_tokens.dsml"),
            std::string::npos);
  EXPECT_NE(bad(R"([1])").find("expected a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace di::recipe

#include "recipe/prepare/prepare.h"
#include "recipe/stream/parser_options_from_prepared.h"

namespace di::recipe {
namespace {

TEST(ParserOptions, FromPreparedCarriesParsingToolsAndModel) {
  RecipeConfig cfg;  // dsv4
  auto p = prepare(cfg, {}, Protocol::kResponses,
                   R"({"model":"deepseek-v4","stream":true,"reasoning":{"effort":"high"},
                       "input":"hi","tools":[{"type":"custom","name":"apply_patch"}]})");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ParserOptions o = parser_options_from_prepared(*p);
  EXPECT_EQ(o.protocol, Protocol::kResponses);
  EXPECT_EQ(o.encoding, EncodingVersion::kDsv4);
  EXPECT_TRUE(o.prompt_opened_thinking && o.thinking && o.parse_tool_calls && o.stream);
  ASSERT_EQ(o.tools.size(), 1u);
  EXPECT_EQ(o.tools[0].type, "custom");
  EXPECT_EQ(o.tools[0].parameters["type"], "object");
  EXPECT_EQ(o.model, "deepseek-v4");
}

}  // namespace
}  // namespace di::recipe
