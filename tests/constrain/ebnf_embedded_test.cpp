// EBNF's generic composition: rules that embed JSON Schemas (%json, %raw_string at a JSON Pointer,
// $refs resolved in the embedded root) and demand special tokens by id (<[id]>), byte-level and
// through a vocabulary whose special tokens only <[id]> reaches; the cache keys tell grammars
// with different schemas apart; malformed references fail saying what.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/constrain/ebnf_compiler.h"
#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/matcher.h"
#include "engine/constrain/special_tokens.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

using di::request::EmbeddedSchema;
using testing::allowed_ids;
using testing::full_match;

const char* kTool = R"({"type": "object",
  "properties": {"city": {"$ref": "#/$defs/City"}, "n": {"type": "integer", "minimum": 0, "maximum": 9},
                 "code": {"type": "string", "pattern": "^[A-Z]{2}$"}, "free": {}, "memo": {"type": "string", "maxLength": 3},
                 "a/b~c": {"const": "slash"}},
  "required": ["city"], "additionalProperties": false,
  "$defs": {"City": {"enum": ["Paris", "Oslo"]}}})";

std::shared_ptr<const Grammar> compile(const std::string& text, const std::vector<EmbeddedSchema>& schemas) {
  auto g = compile_ebnf(text, schemas);
  EXPECT_TRUE(g.is_ok()) << text << ": " << g.status().message();
  return g.is_ok() ? *g : nullptr;
}

TEST(EbnfEmbedded, JsonRefsMatchTheSchemaOrItsPartAtThePointer) {
  JsonSchemaOptions compact;
  compact.whitespace = JsonWhitespace::kCompact;
  const std::vector<EmbeddedSchema> schemas = {{kTool, compact}, {R"({"type": "array", "items": {"type": "boolean"}})", {}}};
  auto g = compile("root ::= \"A\" %json(0) | \"C\" %json(0, \"/properties/city\") | \"N\" %json(0, '/properties/n')"
                   " | \"S\" %json(0, \"/properties/a~1b~0c\") | \"B\" %json(1)",
                   schemas);
  ASSERT_TRUE(g);
  EXPECT_TRUE(full_match(g, R"(A{"city":"Oslo","n":3})"));
  EXPECT_FALSE(full_match(g, R"(A{"city": "Oslo"})"));  // compact whitespace, schema 0's options
  EXPECT_FALSE(full_match(g, R"(A{"n":3})"));           // required city
  EXPECT_FALSE(full_match(g, R"(A{"city":"Oslo","x":1})"));
  EXPECT_TRUE(full_match(g, R"(C"Paris")"));  // the $ref resolved in schema 0's root
  EXPECT_FALSE(full_match(g, R"(C"Rome")"));
  EXPECT_TRUE(full_match(g, "N9"));
  EXPECT_FALSE(full_match(g, "N10"));
  EXPECT_TRUE(full_match(g, R"(S"slash")"));
  EXPECT_TRUE(full_match(g, "B[true, false]"));  // schema 1: flexible whitespace
  EXPECT_FALSE(full_match(g, "B[1]"));
}

TEST(EbnfEmbedded, RawStringsAreTheSchemasStringsUnquoted) {
  const std::vector<EmbeddedSchema> schemas = {{kTool, {}}};
  auto raw = [&](const std::string& key) {
    return compile("root ::= \"<\" %raw_string(0, \"/properties/" + key + "\") \">\"", schemas);
  };
  auto city = raw("city");
  ASSERT_TRUE(city);
  EXPECT_TRUE(full_match(city, "<Oslo>"));
  EXPECT_FALSE(full_match(city, "<\"Oslo\">"));
  EXPECT_FALSE(full_match(city, "<Rome>"));
  auto code = raw("code");  // an anchored pattern
  ASSERT_TRUE(code);
  EXPECT_TRUE(full_match(code, "<FR>"));
  EXPECT_FALSE(full_match(code, "<FRA>"));
  auto memo = raw("memo");
  ASSERT_TRUE(memo);
  EXPECT_TRUE(full_match(memo, "<a\"\n>"));  // raw: quotes and newlines are characters, not escapes
  EXPECT_FALSE(full_match(memo, "<abcd>"));
  auto free = raw("free");
  ASSERT_TRUE(free);
  EXPECT_TRUE(full_match(free, "<anything at all>"));
  // An integer has no raw spelling: only the other branch remains.
  auto n = compile("root ::= \"x\" | \"<\" %raw_string(0, \"/properties/n\") \">\"", schemas);
  ASSERT_TRUE(n);
  EXPECT_TRUE(full_match(n, "x"));
  EXPECT_FALSE(full_match(n, "<3>"));
}

TEST(EbnfEmbedded, SpecialTokensAreTheirReservedBytesOnly) {
  auto g = compile("root ::= \"a\" <[300]> \"b\" | <[4294967295]>", {});
  ASSERT_TRUE(g);
  EXPECT_TRUE(full_match(g, "a" + special_token_bytes(300) + "b"));
  EXPECT_TRUE(full_match(g, special_token_bytes(4294967295u)));
  EXPECT_FALSE(full_match(g, "a" + special_token_bytes(301) + "b"));
  EXPECT_FALSE(full_match(g, "a<[300]>b"));
  EXPECT_EQ(special_token_bytes(0x01020304), std::string("\xFF\x01\x02\x03\x04", 5));
}

TEST(EbnfEmbedded, OnlyTheSpecialTokenItselfSatisfiesItsReference) {
  // ids: 0 "x", 1 "</think>" typed as text, 2 the special </think>, 3 an ordinary token holding
  // 0xFF (excluded), 4 EOS, 5 a hole in the tokenizer.
  ModelTokens t;
  t.bytes = {"x", "</think>", "</think>", "\xFF\x00", "", "y"};
  t.special = {0, 0, 1, 0, 0, 0};
  t.never = {0, 0, 0, 0, 0, 1};
  t.eos_ids = {4};
  t.logits_width = 6;
  auto vocab = model_vocabulary(t);
  ASSERT_TRUE(vocab.is_ok()) << vocab.status().message();
  GrammarCompiler compiler(std::make_shared<const TokenVocabulary>(std::move(vocab).value()));
  auto g = compiler.compile({ConstraintKind::kEbnf, "root ::= \"x\"* <[2]> [^z]*", {}, {}});
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Matcher m(*g);
  std::vector<uint32_t> mask(1);
  m.fill_mask(mask.data());
  EXPECT_EQ(allowed_ids(mask, 6), (std::vector<uint32_t>{0, 2}));
  EXPECT_FALSE(m.accept_token(1).is_ok());
  ASSERT_TRUE(m.accept_token(2).is_ok());
  m.fill_mask(mask.data());
  // After it, [^z]* takes text (including the text "</think>") but never a special token again.
  EXPECT_EQ(allowed_ids(mask, 5), (std::vector<uint32_t>{0, 1, 4}));
}

// A compiled grammar's automaton, for full_match (owned by the CompiledGrammar).
std::shared_ptr<const Grammar> of(const std::shared_ptr<const CompiledGrammar>& c) {
  return std::shared_ptr<const Grammar>(c, &c->grammar());
}

TEST(EbnfEmbedded, TheCacheKeyHoldsTheSchemas) {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, char(b)));
  t.push_back("");
  auto vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::create(std::move(t), {256}, {}).value());
  GrammarCompiler compiler(vocab);
  const std::string text = "root ::= %json(0)";
  auto one = compiler.compile({ConstraintKind::kEbnf, text, {}, {{R"({"const": 1})", {}}}});
  auto two = compiler.compile({ConstraintKind::kEbnf, text, {}, {{R"({"const":  2})", {}}}});
  auto two_again = compiler.compile({ConstraintKind::kEbnf, text, {}, {{R"({"const": 2})", {}}}});
  ASSERT_TRUE(one.is_ok() && two.is_ok() && two_again.is_ok());
  EXPECT_NE(*one, *two);
  EXPECT_EQ(*two, *two_again);  // the schema's spacing does not matter
  EXPECT_EQ(compiler.hits(), 1u);
  EXPECT_TRUE(full_match(of(*two), "2"));
  EXPECT_FALSE(full_match(of(*two), "1"));
  di::request::JsonSchemaOptions strict;
  strict.strict = true;
  auto lax = compiler.compile({ConstraintKind::kEbnf, text, {}, {{R"({"type": "object", "properties": {}})", {}}}});
  auto closed = compiler.compile({ConstraintKind::kEbnf, text, {}, {{R"({"type": "object", "properties": {}})", strict}}});
  ASSERT_TRUE(lax.is_ok() && closed.is_ok());
  EXPECT_TRUE(full_match(of(*lax), R"({"k": 1})"));
  EXPECT_FALSE(full_match(of(*closed), R"({"k": 1})"));
}

TEST(EbnfEmbedded, BadReferencesSayWhat) {
  const std::vector<EmbeddedSchema> one = {{kTool, {}}};
  struct {
    const char* text;
    std::vector<EmbeddedSchema> schemas;
    const char* needle;
  } const kBad[] = {
      {"root ::= %json(1)", one, "embeds 1 schema"},
      {"root ::= %json(0)", {}, "embeds 0 schema"},
      {"root ::= %json(0, \"properties\")", one, "not a JSON Pointer"},
      {"root ::= %json(0, \"/properties/nope\")", one, "/properties/nope"},
      {"root ::= %yaml(0)", one, "expected %json or %raw_string"},
      {"root ::= %json 0", one, "expected '('"},
      {"root ::= %json(0", one, "expected ')'"},
      {"root ::= <[x]>", {}, "expected a token id"},
      {"root ::= <[12 ]>", {}, "expected ']>'"},
      {"root ::= <[4294967296]>", {}, "beyond"},
      {"root ::= %json(0)", {{"{not json", {}}}, "not valid JSON"},
      {"root ::= %json(0)", {{R"({"not": {"type": "string"}})", {}}}, "'not'"},
  };
  for (auto& c : kBad) {
    auto g = compile_ebnf(c.text, c.schemas);
    ASSERT_FALSE(g.is_ok()) << c.text;
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos) << c.text << " -> " << g.status().message();
  }
}

}  // namespace
}  // namespace di::engine::constrain
