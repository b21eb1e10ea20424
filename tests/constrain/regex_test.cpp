// Regex compiler against libstdc++'s std::regex (ECMAScript grammar) as the reference: every
// string up to length 5 over a small alphabet must match (or not) exactly as std::regex says,
// for full matches and for JSON Schema's unanchored search.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "engine/constrain/regex_compiler.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

using testing::all_strings;
using testing::first_disagreement_with_std_regex;
using testing::full_match;

// compile_regex with regex options: the pattern's expression as a grammar's only rule.
Result<std::shared_ptr<const Grammar>> compile_regex_with(std::string_view pattern, const RegexOptions& o) {
  DI_ASSIGN_OR_RETURN(auto e, regex_to_expr(pattern, o));
  GrammarBuilder b;
  const uint32_t r = b.declare("root");
  b.define(r, e);
  return b.build(r);
}

struct Case {
  const char* pattern;
  const char* alphabet;
};

const Case kCases[] = {
    {"a|b", "abc"},
    {"ab*c", "abc"},
    {"(ab)+", "abc"},
    {"a{2,3}", "ab"},
    {"a{2,}b", "ab"},
    {"a{2}", "ab"},
    {"[a-c]+d?", "abde"},
    {"[^ab]c", "abc1"},
    {"(a|bc)*", "abc"},
    {"a.c", "ac\n"},
    {"\\d{2}-\\d+", "12-a"},
    {"[\\w.]+@\\w+", "a.@_-"},
    {"x(?:yz){1,2}", "xyz"},
    {"(a|)+b", "ab"},
    {"[-a]+", "-ab"},
    {"[a-]+", "-ab"},
    {"\\.+", ".a"},
    {"a\\{", "a{"},
    {"[\\d\\s]+", "1 a\t"},
    {"[^\\d]+", "1a "},
    {"\\D\\W\\S", "a1 ."},
    {"(?:a|b)?c{1,2}?", "abc"},
    {"\\x41\\u0042", "ABC"},
    {"[.]", ".a"},
    {"a+?b*?", "ab"},
    {"(a(b|c)){2}", "abc"},
    {"[a-cx-z]{1,3}", "abxy1"},
    {"\\(\\)\\[\\]", "()[]"},
    // Nested repeats (collapsed when building the grammar).
    {"(a+)+", "ab"},
    {"(a*)+b", "ab"},
    {"(a?)+", "ab"},
    {"(a+)?b", "ab"},
    {"(a+)*b", "ab"},
    {"(a{2,})+", "ab"},
    {"(a{2,}){2,}b", "ab"},
    {"((a+)?)+b", "ab"},
    {"(a?){2,3}b", "ab"},
    {"(ab+)+", "ab"},
};

TEST(Regex, FullMatchAgreesWithStdRegexOnEveryShortString) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.pattern);
    auto g = compile_regex(c.pattern);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    const auto bad = first_disagreement_with_std_regex(*g, c.pattern, c.alphabet, 5);
    ASSERT_FALSE(bad.has_value()) << "input '" << *bad << "'";
  }
}

TEST(Regex, SearchModeAgreesWithStdRegexSearch) {
  const Case kSearch[] = {{"ab", "abc"}, {"^ab", "abc"}, {"ab$", "abc"}, {"^a|b$", "abc"},
                          {"^(a|b)c$", "abc"}, {"a{2}", "ab"}, {"^$", "a"}};
  for (const Case& c : kSearch) {
    SCOPED_TRACE(c.pattern);
    RegexOptions o;
    o.search = true;
    auto g = compile_regex_with(c.pattern, o);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    std::regex ref(c.pattern, std::regex::ECMAScript);
    for (const std::string& s : all_strings(c.alphabet, 5)) {
      ASSERT_EQ(full_match(*g, s), std::regex_search(s, ref)) << "input '" << s << "'";
    }
  }
}

// Found by the fuzzer: stacked quantifiers doubled the automaton per level (minutes to compile).
// The grammar is now the size of the single-quantifier one, and the same language.
TEST(Regex, StackedQuantifiersBuildTheSameGrammarAsOne) {
  auto stacked = compile_regex(R"((\d+(\.*\d*%?|[^\s"\\]{0,3})+++++)++++++"?)");
  auto single = compile_regex(R"((\d+(\.*\d*%?|[^\s"\\]{0,3})+)+"?)");
  ASSERT_TRUE(stacked.is_ok()) << stacked.status().message();
  ASSERT_TRUE(single.is_ok()) << single.status().message();
  EXPECT_EQ((*stacked)->nodes().size(), (*single)->nodes().size());
  for (const char* s : {"1", "12.5%", "1x!", "1.", "\"", "x1", "1\"\"", "1.5afc"}) {
    EXPECT_EQ(full_match(*stacked, s), full_match(*single, s)) << s;
  }
}

TEST(Regex, DotAndClassesMatchWholeUtf8Characters) {
  auto g = compile_regex("^.[^a]$");
  ASSERT_TRUE(g.is_ok());
  EXPECT_TRUE(full_match(*g, "\xC3\xA9\xE4\xB8\xAD"));      // é中
  EXPECT_TRUE(full_match(*g, "\xF0\x9F\x98\x80" "b"));      // 😀b
  EXPECT_FALSE(full_match(*g, "\xC3\xA9" "a"));
  EXPECT_FALSE(full_match(*g, "\xC3" "b"));                 // a lone lead byte is no character
  EXPECT_FALSE(full_match(*g, "\xED\xA0\x80" "b"));          // an encoded surrogate is not UTF-8
  auto h = compile_regex("[\\u00e0-\\u00ff]+");
  ASSERT_TRUE(h.is_ok());
  EXPECT_TRUE(full_match(*h, "\xC3\xA0\xC3\xBF"));
  EXPECT_FALSE(full_match(*h, "\xC3\x9F"));
}

TEST(Regex, JsonStringModeMatchesEscapedSpelling) {
  RegexOptions o;
  o.json_string = true;
  auto g = compile_regex_with("^a\"\\\\\\n.$", o);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_TRUE(full_match(*g, "a\\\"\\\\\\nx"));
  EXPECT_TRUE(full_match(*g, "a\\\"\\\\\\u000ax"));
  EXPECT_FALSE(full_match(*g, "a\"\\\\\\nx"));   // raw quote would end the JSON string
  EXPECT_FALSE(full_match(*g, "a\\\"\\\\\nx"));  // raw newline is not allowed in JSON
}

TEST(Regex, UnsupportedFeaturesAreNamed) {
  struct {
    const char* pattern;
    const char* needle;
  } const kBad[] = {{"a(?=b)", "lookahead"}, {"(?<=a)b", "lookbehind"}, {"(a)\\1", "backreference"},
                    {"\\bword", "word boundary"}, {"\\p{L}", "Unicode property"}, {"a^b", "anchor"}};
  for (auto& c : kBad) {
    auto g = compile_regex(c.pattern);
    ASSERT_FALSE(g.is_ok()) << c.pattern;
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos) << g.status().message();
  }
  for (const char* bad : {"(a", "a)", "[a", "*a", "a{3,2}", "\\"}) {
    auto g = compile_regex(bad);
    ASSERT_FALSE(g.is_ok()) << bad;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace di::engine::constrain
