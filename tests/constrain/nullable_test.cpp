// OpenAPI 3.0's `nullable: true` (which real schemas and OpenAI-style tools carry): null is then
// valid besides the schema's own type; without it, or with false, it is not.
#include <gtest/gtest.h>

#include <string>

#include "engine/constrain/json_schema_compiler.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

std::shared_ptr<const Grammar> schema(const std::string& text) {
  auto g = compile_json_schema_text(text);
  EXPECT_TRUE(g.is_ok()) << text << ": " << g.status().message();
  return g.is_ok() ? *g : nullptr;
}

TEST(Nullable, NullableAddsNullToTheTypeAndNothingElse) {
  auto g = schema(R"({"type": "string", "nullable": true})");
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::full_match(g, "null"));
  EXPECT_TRUE(testing::full_match(g, "\"a\""));
  EXPECT_FALSE(testing::full_match(g, "1"));
  EXPECT_FALSE(testing::full_match(g, "true"));
  for (const char* text : {R"({"type": "string"})", R"({"type": "string", "nullable": false})"}) {
    auto plain = schema(text);
    ASSERT_TRUE(plain);
    EXPECT_FALSE(testing::full_match(plain, "null")) << text;
    EXPECT_TRUE(testing::full_match(plain, "\"a\"")) << text;
  }
}

TEST(Nullable, NullablePropertiesOfAnObject) {
  auto g = schema(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "nullable": true}},
                      "required": ["n"], "additionalProperties": false})");
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::full_match(g, R"({"n":null})"));
  EXPECT_TRUE(testing::full_match(g, R"({"n":3})"));
  EXPECT_FALSE(testing::full_match(g, R"({"n":0})"));
  EXPECT_FALSE(testing::full_match(g, R"({"n":"x"})"));
}

}  // namespace
}  // namespace di::engine::constrain
