// StreamParser against the recipe's traces and edge cases (fixtures/recipe_stream/traces.json):
// the parse of every case, text released as soon as it is unambiguous, and the same parse under
// every chunking (split at every byte, at every token).
#include <gtest/gtest.h>

#include "base/utf8.h"
#include "tests/recipe_stream/stream_case.h"

namespace di::recipe {
namespace {

using namespace testing;

std::string describe(const Folded& f) {
  json calls = json::array();
  for (auto& [n, a] : f.calls) calls.push_back({n, a});
  return json{{"reasoning", f.reasoning}, {"content", f.content}, {"calls", calls},
              {"finish", f.finish}, {"stop", f.stop_sequence}}.dump();
}

class TraceCase : public ::testing::TestWithParam<size_t> {
 protected:
  json c = load_cases().at(GetParam());
};

TEST_P(TraceCase, ParsesAsTheReferenceSays) {
  const json& want = c["expect"];
  Folded f = replay(c, recorded_pushes(c));
  SCOPED_TRACE(c["name"].get<std::string>() + " -> " + describe(f));
  EXPECT_EQ(f.reasoning, want["reasoning"]);
  EXPECT_EQ(f.content, want["content"]);
  EXPECT_EQ(f.finish, want["finish"]);
  EXPECT_EQ(f.stop_sequence, want.value("stop_sequence", ""));
  ASSERT_EQ(f.calls.size(), want["tool_calls"].size());
  for (size_t i = 0; i < f.calls.size(); ++i) {
    const json& w = want["tool_calls"][i];
    EXPECT_EQ(f.calls[i].first, w["name"]);
    json args = json::parse(f.calls[i].second, nullptr, false);
    ASSERT_FALSE(args.is_discarded()) << "arguments are not JSON: " << f.calls[i].second;
    EXPECT_TRUE(args.is_object());
    EXPECT_EQ(args, w["arguments"]);
    if (w.contains("arguments_text")) {
      EXPECT_EQ(f.calls[i].second, w["arguments_text"]);
    }
  }
  if (want.contains("content_json")) {
    EXPECT_EQ(json::parse(f.content), want["content_json"]);
  }
  if (want.contains("after_each_push")) {
    std::vector<std::string> seen = f.content_after_push;
    EXPECT_EQ(json(seen), want["after_each_push"]["content"]);
  }
}

TEST_P(TraceCase, EveryChunkingGivesTheSameParse) {
  const Folded ref = replay(c, recorded_pushes(c));
  size_t n = 0;
  for (const auto& pushes : chunkings(c)) {
    Folded f = replay(c, pushes, is_token_case(c) ? case_decoder(c) : TokenDecoder());
    ASSERT_EQ(f, ref) << c["name"] << " chunking #" << n << ": " << describe(f) << " vs "
                      << describe(ref);
    ++n;
  }
}

TEST_P(TraceCase, ReleasedTextIsNeverRetracted) {
  // Whatever a push released is a prefix of the final content: a held-back stop sequence or
  // marker never leaks and has to be taken back.
  for (const auto& pushes : chunkings(c)) {
    Folded f = replay(c, pushes, is_token_case(c) ? case_decoder(c) : TokenDecoder());
    for (const std::string& seen : f.content_after_push)
      ASSERT_EQ(f.content.compare(0, seen.size(), seen), 0) << c["name"];
  }
}

std::vector<size_t> all_cases() {
  std::vector<size_t> v(load_cases().size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Traces, TraceCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return load_cases().at(info.param)["name"].get<std::string>();
                         });

TEST(StreamParser, SplitUtf8CharacterWaitsForItsRest) {
  ParserOptions o;
  StreamParser p(o);
  std::vector<ParsedEvent> ev;
  const std::string crab = "🦀";
  p.push_text(crab.substr(0, 2), &ev);
  EXPECT_TRUE(ev.empty());
  p.push_text(crab.substr(2), &ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, crab);
}

TEST(StreamParser, InvalidUtf8BecomesReplacementCharacter) {
  ParserOptions o;
  StreamParser p(o);
  std::vector<ParsedEvent> ev;
  p.push_text("a\xFF\xFA" "b", &ev);
  p.finish(EngineFinish::kStop, &ev);
  std::string all;
  for (auto& e : ev) all += e.text;
  EXPECT_EQ(all, "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
}

TEST(StreamParser, InvalidUtf8IsReplacedPerMaximalSubpartAsDecodeDoes) {
  // Unicode 15, chapter 3, Table 3-8, pushed one byte at a time: the parser's text equals the
  // tokenizer's lossy decode of the same bytes.
  const std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64\xE4\xB8";
  ParserOptions o;
  StreamParser p(o);
  std::vector<ParsedEvent> ev;
  for (char c : in) p.push_text(std::string_view(&c, 1), &ev);
  p.finish(EngineFinish::kStop, &ev);
  std::string all;
  for (auto& e : ev) all += e.text;
  EXPECT_EQ(all, "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd\uFFFD");
  EXPECT_EQ(all, utf8_lossy(in));
}

TEST(StreamParser, InputAfterAStopSequenceIsIgnored) {
  ParserOptions o;
  o.stop_sequences = {"END"};
  StreamParser p(o);
  std::vector<ParsedEvent> ev;
  p.push_text("aEND", &ev);
  EXPECT_TRUE(p.stopped());
  p.push_text("more", &ev);
  FinishInfo info = p.finish(EngineFinish::kLength, &ev);
  EXPECT_EQ(info.reason, FinishReason::kStopSequence);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, "a");
}

}  // namespace
}  // namespace di::recipe
