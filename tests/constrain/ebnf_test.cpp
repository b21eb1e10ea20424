// EBNF compiler: regular grammars agree with std::regex on every short string, a recursive
// grammar agrees with a bracket-matching stack, a JSON grammar written in EBNF agrees with
// nlohmann::json::accept, and malformed grammars fail with errors that say where and what.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/constrain/ebnf_compiler.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

using testing::all_strings;
using testing::first_disagreement_with_std_regex;
using testing::full_match;

TEST(Ebnf, RegularGrammarsAgreeWithEquivalentRegex) {
  struct {
    const char* ebnf;
    const char* regex;
    const char* alphabet;
  } const kCases[] = {
      {"root ::= (\"ab\" | [c-d]+)* \"x\"?", "(ab|[c-d]+)*x?", "abcdx"},
      {"root ::= a b{2,3} # comment\na ::= 'a' | \"\"\nb ::= [^a]", "a?[^a]{2,3}", "abc"},
      {"root ::= /[0-9]{1,2}(\\.[0-9])?/ unit\nunit ::= \"kg\" | \"g\"", "[0-9]{1,2}(\\.[0-9])?(kg|g)", "1.kg"},
      {"root ::= (x | y)+ \nx ::= \"x\"{2}\ny ::= \"y\"{1,}", "(xx|y+)+", "xy"},
      {"root ::= \"\\x61\\u0062\" ( \"\\n\" )?", "ab\\n?", "ab\n"},
  };
  for (auto& c : kCases) {
    SCOPED_TRACE(c.ebnf);
    auto g = compile_ebnf(c.ebnf);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    const auto bad = first_disagreement_with_std_regex(*g, c.regex, c.alphabet, 5);
    ASSERT_FALSE(bad.has_value()) << "input '" << *bad << "'";
  }
}

bool balanced(const std::string& s) {
  std::string stack;
  for (char c : s) {
    if (c == '(' || c == '[') {
      stack += c;
    } else {
      if (stack.empty() || stack.back() != (c == ')' ? '(' : '[')) return false;
      stack.pop_back();
    }
  }
  return stack.empty();
}

TEST(Ebnf, RecursiveGrammarMatchesBalancedBrackets) {
  auto g = compile_ebnf("root ::= item*\nitem ::= \"(\" root \")\" | \"[\" root \"]\"");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  int yes = 0;
  for (const std::string& s : all_strings("()[]", 7)) {
    bool b = balanced(s);
    yes += b;
    ASSERT_EQ(full_match(*g, s), b) << s;
  }
  EXPECT_EQ(yes, 51);  // 1 + 2 + 8 + 40 balanced strings of length 0, 2, 4, 6
}

const char* kJsonEbnf = R"(
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( ws "," ws member )* ws )? "}"
member ::= string ws ":" ws value
array  ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [+-]? [0-9]+ )?
ws     ::= [ \t\n\r]*
)";

TEST(Ebnf, JsonGrammarAgreesWithNlohmannAccept) {
  auto g = compile_ebnf(kJsonEbnf);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  // Real JSON texts from the test-suite fixtures, and every prefix of each (mostly invalid).
  std::vector<std::string> texts;
  const std::string dir = std::string(DI_FIXTURES_DIR) + "/constrain/json-schema-test-suite/draft2020-12";
  for (const char* f : {"properties.json", "enum.json", "const.json", "items.json", "pattern.json"}) {
    auto groups = nlohmann::json::parse(testing::read_file(dir + "/" + f));
    for (auto& grp : groups) {
      for (auto& t : grp["tests"]) {
        texts.push_back(t["data"].dump());
        texts.push_back(t["data"].dump(1, '\t'));
      }
    }
  }
  size_t checked = 0, valid = 0;
  for (const std::string& t : texts) {
    for (size_t n = 0; n <= t.size(); ++n) {
      std::string s = t.substr(0, n);
      bool ref = nlohmann::json::accept(s);
      valid += ref;
      ASSERT_EQ(full_match(*g, s), ref) << "'" << s << "'";
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000u);
  EXPECT_GT(valid, 500u);
}

TEST(Ebnf, MalformedGrammarsSayWhatAndWhere) {
  struct {
    const char* text;
    const char* needle;
  } const kBad[] = {
      {"root ::= root \"a\" | \"b\"", "left recursion through rule 'root'"},
      {"root ::= a\na ::= b? a \"x\" | \"y\"\nb ::= \"b\"", "left recursion through rule 'a'"},
      {"root ::= a\na ::= \"x\" a", "matches no string"},
      {"root ::= missing", "rule 'missing' is used but never defined"},
      {"start ::= \"a\"", "no rule named 'root'"},
      {"root ::= \"a\"\nroot ::= \"b\"", "defined twice"},
      {"root ::= \"abc", "line 1, column"},
      {"root ::= \"a\"\n  x{3,1}", "line 2"},
      {"root ::= ( \"a\" ", "expected ')'"},
      {"root ::= /a(?=b)/", "lookahead"},
      {"", "empty"},
  };
  for (auto& c : kBad) {
    auto g = compile_ebnf(c.text);
    ASSERT_FALSE(g.is_ok()) << c.text;
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos) << c.text << " -> " << g.status().message();
  }
}

}  // namespace
}  // namespace di::engine::constrain
