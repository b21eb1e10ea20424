// TextStream: UTF-8 characters split over tokens are never split in the output; stop strings
// are found across token borders and held back until decided; special tokens are skipped.
#include <gtest/gtest.h>

#include "base/utf8.h"
#include "engine/output/text_stream.h"
#include "tests/engine/toy_model.h"

namespace di::engine {
namespace {

using testing::ToyTokenText;

TEST(TextStream, NeverEmitsAPartialUtf8Character) {
  ToyTokenText tt;
  TextStream ts(&tt, true, {});
  std::string out, all;
  // 3 = C3, 4 = A9 ('é'); 5 = E4 B8, 6 = AD + ' ' ('中 ')
  for (int32_t t : {1, 3, 4, 5, 6, 3}) {
    out.clear();
    ts.push(t, false, &out);
    EXPECT_TRUE(utf8_valid(out)) << "after token " << t;
    all += out;
  }
  out.clear();
  ts.flush(&out);
  all += out;
  EXPECT_EQ(all, "w1 \xC3\xA9\xE4\xB8\xAD \xEF\xBF\xBD");  // the cut-off C3 becomes U+FFFD
}

TEST(TextStream, StrayContinuationBytesBecomeReplacementCharacters) {
  ToyTokenText tt;
  TextStream ts(&tt, true, {});
  std::string out;
  ts.push(4, false, &out);  // A9 alone
  ts.push(1, false, &out);
  EXPECT_EQ(out, "\xEF\xBF\xBDw1 ");
}

TEST(TextStream, StopStringAcrossTokensIsHeldBackAndRemoved) {
  ToyTokenText tt;
  TextStream ts(&tt, true, {"w2 w8"});
  std::string out;
  EXPECT_FALSE(ts.push(1, false, &out));
  EXPECT_EQ(out, "w1 ");
  EXPECT_FALSE(ts.push(2, false, &out));
  EXPECT_EQ(out, "w1 ");  // "w2 " could start the stop string: held
  EXPECT_TRUE(ts.push(8, false, &out));
  EXPECT_EQ(out, "w1 ");
  EXPECT_TRUE(ts.stopped());
}

TEST(TextStream, HeldTextIsReleasedWhenItCannotBeAStop) {
  ToyTokenText tt;
  TextStream ts(&tt, true, {"w2 w8"});
  std::string out;
  ts.push(2, false, &out);
  EXPECT_EQ(out, "");
  ts.push(9, false, &out);
  EXPECT_EQ(out, "w2 w9 ");
}

TEST(TextStream, SpecialTokensAreSkippedOnlyWhenAsked) {
  ToyTokenText tt;
  std::string a, b;
  TextStream skip(&tt, true, {}), keep(&tt, false, {});
  skip.push(0, false, &a);
  keep.push(0, false, &b);
  EXPECT_EQ(a, "");
  EXPECT_EQ(b, "<eos>");
}

}  // namespace
}  // namespace di::engine
