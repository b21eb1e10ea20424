// Grammars whose language is empty (found by the constrain fuzzers): the matcher must treat them
// consistently (a zero-byte step is accepted like zero single-byte steps, nothing else is), and the
// engine's GrammarCompiler must refuse them up front instead of letting a request end silently.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/json_schema_compiler.h"
#include "engine/constrain/matcher.h"
#include "engine/constrain/regex_compiler.h"

namespace di::engine::constrain {
namespace {

std::shared_ptr<const TokenVocabulary> byte_vocab() {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, char(b)));
  t.push_back("");  // EOS
  return std::make_shared<const TokenVocabulary>(TokenVocabulary::create(std::move(t), {256}, {}).value());
}

std::shared_ptr<const Grammar> ok(Result<std::shared_ptr<const Grammar>> r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : nullptr;
}

bool matches_nothing(Result<std::shared_ptr<const Grammar>> r) {
  auto g = ok(std::move(r));
  return g && g->matches_nothing();
}

// The fuzzer's JSON Schema input: misspelled "properties" leaves "name" required yet forbidden.
const char kMisspelledSchema[] =
    R"({"type": "object", "propetries": {"name": {"tyep": "string", "maxLength": 8}, "age": {"type": "integer", )"
    R"("minimum": 0, "maximum": 120}}, "required": ["name"], "additionalProperties": false})";
// The fuzzer's regex input (no newline, so all of it is the pattern): ill-formed UTF-8, which
// decoded "\xf7\x04\0\0" to a code point past U+10FFFF, a literal no string matches.
const std::string kFuzzRegex("\xd2^\xa2\x84\xcd\xd3" "3}@test.org\0\0\x08\xff\xff\xff\xff\xff\xff\xf7\x04\0\0\0\0\0\0\0.org", 39);

TEST(EmptyLanguage, GrammarsThatMatchNothingAreFlagged) {
  auto schema = compile_json_schema_text(kMisspelledSchema, {});
  ASSERT_TRUE(schema.is_ok()) << schema.status().message();
  EXPECT_TRUE((*schema)->matches_nothing());
  EXPECT_TRUE(matches_nothing(compile_regex("[]")));
  EXPECT_TRUE(matches_nothing(compile_regex("a[]b")));
  EXPECT_TRUE(matches_nothing(compile_json_schema_text(R"({"type":"string","enum":[1]})", {})));
  // Satisfiable ones are not flagged, including the empty string alone.
  EXPECT_FALSE(matches_nothing(compile_regex("^$")));
  EXPECT_FALSE(matches_nothing(compile_regex("a[]|b")));
  EXPECT_FALSE(matches_nothing(compile_json_schema_text(R"({"type":"object","required":["name"]})", {})));
}

TEST(EmptyLanguage, RegexRefusesIllFormedUtf8NamingTheByte) {
  auto re = compile_regex(kFuzzRegex);
  ASSERT_FALSE(re.is_ok());
  EXPECT_EQ(re.status().message(), "regex: the pattern is not valid UTF-8 (at byte 0)");
  for (const auto& [pattern, at] : std::vector<std::pair<std::string, int>>{
           {"ab\xf7\x04\x00\x00", 2}, {"x\xd2^", 1}, {"\xed\xa0\x80", 0}, {"\xc0\xaf", 0}, {"\xe2\x82", 0}}) {
    auto r = compile_regex(pattern);
    ASSERT_FALSE(r.is_ok()) << pattern;
    EXPECT_EQ(r.status().message(), "regex: the pattern is not valid UTF-8 (at byte " + std::to_string(at) + ")");
  }
  // Well-formed multibyte characters still compile, as literals and in classes.
  EXPECT_FALSE(matches_nothing(compile_regex("\xc3\xa9[\xe2\x82\xac\xf0\x9f\x98\x80]+")));
}

TEST(EmptyLanguage, MatcherTakesZeroBytesAsOneStepAndRefusesEveryByte) {
  auto vocab = byte_vocab();
  for (const auto& g : {ok(compile_regex("a[]")), ok(compile_json_schema_text(kMisspelledSchema, {}))}) {
    ASSERT_TRUE(g);
    Matcher m(std::make_shared<const CompiledGrammar>(g, vocab));
    std::vector<uint32_t> mask(vocab->mask_words());
    EXPECT_EQ(m.fill_mask(mask.data()), 0u);
    EXPECT_FALSE(m.can_end());
    // Byte by byte nothing is taken; all at once the empty prefix must agree (the fuzz invariant).
    EXPECT_TRUE(m.accept_bytes("").is_ok());
    EXPECT_EQ(m.num_steps(), 1u);
    EXPECT_FALSE(m.accept_bytes("{").is_ok());
    EXPECT_FALSE(m.accept_token('{').is_ok());
    EXPECT_FALSE(m.accept_token(256).is_ok());  // EOS: the output is not complete
    EXPECT_TRUE(m.rollback(1).is_ok());
    EXPECT_EQ(m.fill_mask(mask.data()), 0u);
  }
  // On a live grammar an empty step keeps the state, mask and all.
  Matcher live(std::make_shared<const CompiledGrammar>(ok(compile_regex("ab")), vocab));
  std::vector<uint32_t> before(vocab->mask_words()), after(vocab->mask_words());
  ASSERT_TRUE(live.accept_bytes("a").is_ok());
  live.fill_mask(before.data());
  ASSERT_TRUE(live.accept_bytes("").is_ok());
  live.fill_mask(after.data());
  EXPECT_EQ(before, after);
  EXPECT_TRUE(live.accept_bytes("b").is_ok());
  EXPECT_TRUE(live.can_end());
}

TEST(EmptyLanguage, GrammarCompilerRefusesAConstraintNothingSatisfies) {
  GrammarCompiler compiler(byte_vocab());
  ConstraintSpec schema{ConstraintKind::kJsonSchema, kMisspelledSchema, {}};
  auto r = compiler.compile(schema);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("json_schema: no output can satisfy it"), std::string::npos) << r.status().message();
  auto re = compiler.compile(ConstraintSpec{ConstraintKind::kRegex, "x[]", {}});
  ASSERT_FALSE(re.is_ok());
  EXPECT_NE(re.status().message().find("regex: no output can satisfy it"), std::string::npos) << re.status().message();
  EXPECT_EQ(compiler.size(), 0u);  // nothing cached
  EXPECT_TRUE(compiler.compile(ConstraintSpec{ConstraintKind::kRegex, "a|b", {}}).is_ok());
}

}  // namespace
}  // namespace di::engine::constrain
