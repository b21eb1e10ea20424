// Split behaviors on the example of Hugging Face's documentation ("the-final--countdown" split
// on "-"), and pre-tokenizer pieces of the DeepSeek and Llama-3 patterns on edge cases.
#include <gtest/gtest.h>

#include "recipe/tokenizer/pre_tokenizer.h"

namespace di::recipe {
namespace {

std::vector<std::string> split(SplitBehavior behavior, const std::string& text, bool invert = false) {
  SplitStep step{*SplitPattern::from_string("-"), behavior, invert};
  std::vector<std::pair<size_t, size_t>> ranges;
  PreTokenizer::split_one(step, text, ranges);
  std::vector<std::string> out;
  for (auto [b, e] : ranges) out.push_back(text.substr(b, e - b));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(Split, BehaviorsMatchTheDocumentedExample) {
  const std::string s = "the-final--countdown";
  EXPECT_EQ(split(SplitBehavior::kRemoved, s), (Pieces{"the", "final", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kIsolated, s), (Pieces{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithPrevious, s), (Pieces{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithNext, s), (Pieces{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split(SplitBehavior::kContiguous, s), (Pieces{"the", "-", "final", "--", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kRemoved, s, /*invert=*/true), (Pieces{"-", "-", "-"}));
}

Pieces pre_tokenize(const std::vector<std::string>& regexes, const std::string& text) {
  PreTokenizer pt;
  for (const auto& r : regexes) pt.add_split(SplitStep{*SplitPattern::from_regex(r)});
  Pieces out;
  pt.split(text, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

TEST(Split, Llama3PatternHandlesWhitespaceLookaheadAndContractions) {
  EXPECT_EQ(pre_tokenize({kLlama3}, "I'M  here\n\n  ok  "),
            (Pieces{"I", "'M", " ", " here", "\n\n", " ", " ok", "  "}));
  EXPECT_EQ(pre_tokenize({kLlama3}, "12345 x"), (Pieces{"123", "45", " x"}));
}

TEST(Split, DeepSeekDigitStepRunsBeforeTheOthers) {
  const std::vector<std::string> ds = {
      R"(\p{N}{1,3})", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"};
  EXPECT_EQ(pre_tokenize(ds, " 12345"), (Pieces{" ", "123", "45"}));
  EXPECT_EQ(pre_tokenize(ds, "a.com 你好abc"), (Pieces{"a", ".com", " ", "你好", "abc"}));
}

}  // namespace
}  // namespace di::recipe
