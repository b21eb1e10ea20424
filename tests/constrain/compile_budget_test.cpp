// The compile work budget (GrammarLimits::max_compile_work): a pattern whose automaton explodes
// (a fuzzer finding: 173k states, seconds of CPU) is refused with kLimit naming the budget and the
// repetition responsible; the units are deterministic, so the limit is exact; every compiler and
// GrammarCompiler honour the limits they are given.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "engine/constrain/grammar_compiler.h"
#include "engine/constrain/regex_compiler.h"
#include "tests/constrain/test_util.h"

namespace di::engine::constrain {
namespace {

// tests/fuzz/seeds/constrain_regex/budget_counted_class_in_loop (first line): \d+ and the class
// overlap on digits, so inside the loop every position may be any of the 69 counts at once.
const char* const kFinding = R"((\d+(\.\d*)?|[^\s"\\]{069})*.x)";

TEST(CompileBudget, TheFuzzFindingIsRefusedNamingTheBudgetAndTheRepetition) {
  const auto t0 = std::chrono::steady_clock::now();
  auto g = compile_regex(kFinding);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kLimit);
  const std::string& m = g.status().message();
  EXPECT_NE(m.find("max_compile_work"), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(GrammarLimits::kDefaultCompileWork)), std::string::npos) << m;
  // Code point 13 is `[^\s"\\]`, the atom of `{069}`.
  EXPECT_NE(m.find("repetition at offset 13"), std::string::npos) << m;
  // Unbudgeted, this took 3-6 s at -O2 (about a minute in a debug build); the budget stops it
  // after a few percent of that work. Loose bound: shared CI machines are slow.
  EXPECT_LT(s, 20.0);
}

TEST(CompileBudget, WorkUnitsAreDeterministicAndTheLimitIsExact) {
  // The same shape with a small count compiles (about 1.4 M units).
  const std::string pattern = R"((\d+(\.\d*)?|[^\s"\\]{9})*.x)";
  auto a = compile_regex(pattern);
  auto b = compile_regex(pattern);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_TRUE(b.is_ok());
  const uint64_t work = (*a)->compile_work();
  EXPECT_GT(work, 100000u);
  EXPECT_EQ(work, (*b)->compile_work());
  GrammarLimits at;
  at.max_compile_work = work;
  auto fits = compile_regex(pattern, at);
  ASSERT_TRUE(fits.is_ok()) << fits.status().message();
  EXPECT_EQ((*fits)->compile_work(), work);
  GrammarLimits under;
  under.max_compile_work = work - 1;
  auto refused = compile_regex(pattern, under);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kLimit);
  // Still the pattern's language (std::regex as the reference).
  const std::regex ref(pattern, std::regex::ECMAScript);
  for (const std::string s : {"12.5abcdefghix", "12.5abcdefghx", "?x", "1.x", "abcdefghi7.x", "abcdefgh 7x", "x"})
    EXPECT_EQ(testing::full_match(*a, s), std::regex_match(s, ref)) << s;
}

TEST(CompileBudget, EveryConstraintKindHonoursItsLimits) {
  GrammarLimits tiny;
  tiny.max_compile_work = 50;
  const std::vector<ConstraintSpec> specs = {
      {ConstraintKind::kJsonSchema, R"({"type": "object", "properties": {"a": {"type": "string"}}})", {}},
      {ConstraintKind::kJsonObject, "", {}},
      {ConstraintKind::kRegex, "[a-z]+@[a-z]+\\.com", {}},
      {ConstraintKind::kEbnf, "root ::= \"yes\" | \"no\" | [0-9]+", {}},
      {ConstraintKind::kEbnf, "root ::= .* <[7]> [ \\n]{0,4} %json(0)", {}, {{R"({"type": "object"})", {}}}},
  };
  for (const ConstraintSpec& spec : specs) {
    auto full = compile_constraint(spec);
    ASSERT_TRUE(full.is_ok()) << spec.source << ": " << full.status().message();
    EXPECT_GT((*full)->compile_work(), 50u) << spec.source;
    auto small = compile_constraint(spec, tiny);
    ASSERT_FALSE(small.is_ok()) << spec.source;
    EXPECT_EQ(small.status().code(), StatusCode::kLimit) << spec.source;
    EXPECT_NE(small.status().message().find("max_compile_work"), std::string::npos) << small.status().message();
  }
  GrammarLimits unlimited;
  unlimited.max_compile_work = 0;
  EXPECT_TRUE(compile_constraint(specs[0], unlimited).is_ok());
}

TEST(CompileBudget, GrammarCompilerRefusesOverItsBudget) {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, char(b)));
  t.push_back("");  // EOS
  auto vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::create(std::move(t), {256}, {}).value());
  GrammarLimits tiny;
  tiny.max_compile_work = 50;
  GrammarCompiler strict(vocab, 16, tiny);
  GrammarCompiler standard(vocab);
  const ConstraintSpec spec{ConstraintKind::kRegex, "[0-9]{4}-[0-9]{2}", {}};
  auto refused = strict.compile(spec);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kLimit);
  EXPECT_TRUE(standard.compile(spec).is_ok());
  auto finding = standard.compile(ConstraintSpec{ConstraintKind::kRegex, kFinding, {}});
  ASSERT_FALSE(finding.is_ok());
  EXPECT_EQ(finding.status().code(), StatusCode::kLimit);
}

}  // namespace
}  // namespace di::engine::constrain
