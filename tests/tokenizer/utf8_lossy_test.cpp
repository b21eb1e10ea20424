// utf8_lossy against the Unicode Standard's example of U+FFFD substitution of maximal subparts
// (Unicode 15, chapter 3, Table 3-8) and the stream cut point it relies on.
#include <gtest/gtest.h>

#include "base/utf8.h"

namespace di {
namespace {

TEST(Utf8Lossy, ReplacesMaximalSubpartsAsTheStandardShows) {
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  EXPECT_EQ(utf8_lossy(in), "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd");
}

TEST(Utf8Lossy, LeavesWellFormedTextAlone) {
  const std::string s = "h\xC3\xA9llo \xF0\x9F\xA6\x80 \xE4\xBD\xA0";
  EXPECT_EQ(utf8_lossy(s), s);
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate is 3 subparts
}

TEST(Utf8Lossy, ConcatenationAtTheCompletePrefixIsLossless) {
  // For every split of an ill-formed byte string at its complete prefix, decoding the parts
  // separately equals decoding the whole.
  const std::string s = "a\xF0\x9F\x98\x80\xE0\xA0\x41\xF0\x9F\xC3\xA9\xE2\x82";
  for (size_t n = 0; n <= s.size(); ++n) {
    const std::string head = s.substr(0, n);
    const size_t cut = utf8_complete_prefix(head);
    EXPECT_EQ(utf8_lossy(head.substr(0, cut)) + utf8_lossy(head.substr(cut) + s.substr(n)),
              utf8_lossy(s))
        << n;
  }
}

}  // namespace
}  // namespace di
