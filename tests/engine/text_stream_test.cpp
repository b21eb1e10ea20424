// TextStream: UTF-8 characters split over tokens are never split in the output; ill-formed bytes
// become U+FFFD per maximal subpart, so the streamed text equals a lossy decode of all bytes; stop
// strings are found across token borders and held back until decided; special tokens are skipped.
#include <gtest/gtest.h>

#include <random>

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

// Token i stands for the single byte i: any byte string can be streamed one byte per token.
class ByteTokenText final : public TokenText {
 public:
  ByteTokenText() {
    for (int i = 0; i < 256; ++i) bytes_[i] = std::string(1, static_cast<char>(i));
  }
  int64_t vocab_size() const override { return 256; }
  std::string_view token_bytes(int32_t id) const override { return bytes_[id]; }
  bool is_special(int32_t) const override { return false; }

 private:
  std::string bytes_[256];
};

std::string stream_bytes(const std::string& bytes) {
  ByteTokenText tt;
  TextStream ts(&tt, true, {});
  std::string out;
  for (unsigned char b : bytes) ts.push(b, false, &out);
  ts.flush(&out);
  return out;
}

TEST(TextStream, OneReplacementPerMaximalSubpartAsTheUnicodeStandardShows) {
  // Unicode 15, chapter 3, Table 3-8: "U+FFFD for each maximal subpart", fed byte by byte.
  EXPECT_EQ(stream_bytes("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd");
  EXPECT_EQ(stream_bytes("\xE4\xB8" "A"), "\uFFFD" "A");  // a cut-off 3-byte lead: one U+FFFD
  EXPECT_EQ(stream_bytes("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate: three
}

TEST(TextStream, StreamedTextEqualsLossyDecodeOfTheSameBytes) {
  // Random strings over lead, continuation, boundary and invalid bytes, in random token splits.
  const unsigned char alphabet[] = {0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF,
                                    0xE0, 0xE4, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xB8, 0xAD};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) bytes += static_cast<char>(alphabet[rng() % sizeof alphabet]);
    ASSERT_EQ(stream_bytes(bytes), utf8_lossy(bytes)) << "round " << round;
  }
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
