// TextStream: UTF-8 characters split over tokens are never split in the output; ill-formed bytes
// become U+FFFD per maximal subpart, so the streamed text equals a lossy decode of all bytes; stop
// strings are found across token borders and held back until decided; special tokens are skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

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

TEST(TextStream, StopStringsThatOverlapAPartialMatchAreFound) {
  // A failed partial match falls back to its longest border: "猫猫" in "猫b猫猫", "aab" in "aaab".
  ByteTokenText tt;
  for (const auto& [text, stop, before] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"\xE7\x8C\xAB" "b" "\xE7\x8C\xAB\xE7\x8C\xAB", "\xE7\x8C\xAB\xE7\x8C\xAB", "\xE7\x8C\xAB" "b"},
           {"aaab", "aab", "a"}}) {
    TextStream ts(&tt, true, {stop});
    std::string out;
    bool stopped = false;
    for (unsigned char c : text) stopped = ts.push(c, false, &out);
    EXPECT_TRUE(stopped) << stop;
    EXPECT_EQ(out, before) << stop;
  }
}

// Tokens are whole strings here, so one push can bring several stops at once.
class StringTokenText final : public TokenText {
 public:
  explicit StringTokenText(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}
  int64_t vocab_size() const override { return static_cast<int64_t>(tokens_.size()); }
  std::string_view token_bytes(int32_t id) const override { return tokens_[id]; }
  bool is_special(int32_t) const override { return false; }

 private:
  std::vector<std::string> tokens_;
};

// The text released by a stream of the one token `token` that `stop` must end on it.
std::string text_before_stop(const std::string& token, const std::vector<std::string>& stop) {
  StringTokenText tt({token});
  TextStream ts(&tt, true, stop);
  std::string out;
  EXPECT_TRUE(ts.push(0, false, &out));
  return out;
}

TEST(TextStream, TheStopStartingFirstWinsWhenOneTokenCompletesTwo) {
  EXPECT_EQ(text_before_stop("xabcdy", {"bc", "abcd"}), "x");
}

TEST(TextStream, AnEmptyStopStringEndsBeforeAnyText) { EXPECT_EQ(text_before_stop("abc", {"zz", ""}), ""); }

// What a stop-string stream must give, written the plain way: after each token, the earliest
// occurrence of any stop in all the text so far ends it; otherwise everything that is no proper
// prefix of a stop at the end has been released.
struct Expected {
  std::string released;
  bool stopped = false;
};
Expected plain_stop_stream(const std::vector<std::string>& pieces, const std::vector<std::string>& stops) {
  std::string text;
  Expected e;
  for (const std::string& p : pieces) {
    text += p;
    size_t best = std::string::npos;
    for (const std::string& s : stops) best = std::min(best, text.find(s));
    if (best != std::string::npos) return {text.substr(0, best), true};
    size_t hold = 0;
    for (const std::string& s : stops)
      for (size_t len = std::min(s.size() - 1, text.size()); len > hold; --len)
        if (text.compare(text.size() - len, len, s, 0, len) == 0) hold = len;
    e.released = text.substr(0, text.size() - hold);
  }
  return e;
}

TEST(TextStream, StopMatchingAgreesWithThePlainSearchOnRandomStreams) {
  std::mt19937 rng(11);
  auto word = [&](size_t max_len) {
    std::string w;
    const size_t n = 1 + rng() % max_len;
    for (size_t i = 0; i < n; ++i) w += static_cast<char>('a' + rng() % 3);
    return w;
  };
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string> tokens, stops;
    for (int i = 0; i < 6; ++i) tokens.push_back(word(4));
    const int n_stops = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n_stops; ++i) stops.push_back(word(5));
    StringTokenText tt(tokens);
    TextStream ts(&tt, true, stops);
    std::vector<std::string> pieces;
    std::string out;
    bool stopped = false;
    for (int i = 0; i < 8 && !stopped; ++i) {
      const int32_t id = static_cast<int32_t>(rng() % tokens.size());
      pieces.push_back(tokens[id]);
      stopped = ts.push(id, false, &out);
      const Expected e = plain_stop_stream(pieces, stops);
      ASSERT_EQ(stopped, e.stopped) << "round " << round << " token " << i;
      ASSERT_EQ(out, e.released) << "round " << round << " token " << i;
    }
  }
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
