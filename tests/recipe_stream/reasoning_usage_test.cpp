// reasoning_tokens in usage (Chat completion_tokens_details, Responses output_tokens_details):
// the tokens generated while the output was reasoning, `</think>` included — counted from the
// ids themselves, so the count must equal the position of the closing control token plus one,
// however the ids are chunked, and a `</think>` typed as plain tokens does not end it.
#include <gtest/gtest.h>

#include <map>

#include "recipe/protocol/output_parser.h"
#include "tests/recipe_stream/output_run.h"

namespace di::recipe {
namespace {

using nlohmann::json;

constexpr int32_t kThinkEnd = 9;
const std::map<int32_t, std::string> kVocab = {
    {1, "Let"}, {2, " me"}, {3, " think"}, {4, "Answer"}, {5, "."},
    {7, "</"}, {8, "think>"}, {kThinkEnd, "</think>"}};

TokenDecoder decoder() {
  return [](int32_t id) -> std::optional<std::string> {
    auto it = kVocab.find(id);
    if (it == kVocab.end()) return std::nullopt;
    return it->second;
  };
}

ParserOptions options(Protocol p, bool thinking = true) {
  ParserOptions o;
  o.protocol = p;
  o.prompt_opened_thinking = o.thinking = thinking;
  o.control_tokens.think_end = kThinkEnd;
  o.request_id = "r";
  o.created = 1;
  return o;
}

std::string text_of(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += kVocab.at(id);
  return s;
}

// Pushes `ids` in chunks of `per_chunk` (0 = all at once) and returns the final response.
json run_ids(Protocol p, const std::vector<int32_t>& ids, size_t per_chunk, bool with_decoder,
             bool thinking = true) {
  OutputParser parser(options(p, thinking), with_decoder ? decoder() : TokenDecoder());
  std::vector<SseEvent> ev;
  const size_t step = per_chunk == 0 ? ids.size() : per_chunk;
  for (size_t i = 0; i < ids.size(); i += step) {
    std::vector<int32_t> part(ids.begin() + i, ids.begin() + std::min(ids.size(), i + step));
    const std::string text = text_of(part);
    OutputChunk c;
    c.token_ids = part;
    c.text = text;
    parser.push(c, &ev);
  }
  return testing::stop_and_respond(parser, &ev);
}

int64_t chat_reasoning(const json& r) {
  return r["usage"]["completion_tokens_details"]["reasoning_tokens"];
}

size_t expected_reasoning(const std::vector<int32_t>& ids) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == kThinkEnd) return i + 1;
  return ids.size();
}

TEST(ReasoningTokens, CountIsThePositionOfTheClosingControlTokenWhateverTheChunking) {
  const std::vector<int32_t> ids = {1, 2, 3, kThinkEnd, 4, 5};
  for (bool dec : {true, false}) {
    // Without a decoder a chunk's stage is known only up to its control token: one id per chunk.
    for (size_t per : dec ? std::vector<size_t>{0, 1, 2, 3} : std::vector<size_t>{1}) {
      json r = run_ids(Protocol::kChatCompletions, ids, per, dec);
      EXPECT_EQ(chat_reasoning(r), static_cast<int64_t>(expected_reasoning(ids)))
          << "decoder " << dec << " per " << per;
      EXPECT_EQ(r["usage"]["completion_tokens"], static_cast<int64_t>(ids.size()));
      EXPECT_EQ(r["choices"][0]["message"]["content"], "Answer.");
    }
  }
}

TEST(ReasoningTokens, TypedThinkEndIsStillReasoning) {
  const std::vector<int32_t> ids = {1, 7, 8, 2, kThinkEnd, 4};
  json r = run_ids(Protocol::kChatCompletions, ids, 1, true);
  EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], "Let</think> me");
  EXPECT_EQ(chat_reasoning(r), static_cast<int64_t>(expected_reasoning(ids)));
}

TEST(ReasoningTokens, ResponsesReportsThemInOutputTokensDetails) {
  const std::vector<int32_t> ids = {1, 2, kThinkEnd, 4};
  json r = run_ids(Protocol::kResponses, ids, 1, true);
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 3);
  EXPECT_EQ(r["usage"]["output_tokens"], 4);
}

TEST(ReasoningTokens, NonThinkingOutputHasNone) {
  json r = run_ids(Protocol::kChatCompletions, {4, 5}, 1, true, /*thinking=*/false);
  EXPECT_EQ(chat_reasoning(r), 0);
}

TEST(ReasoningTokens, TextChunksCountTheCompletionGrowthWhileReasoning) {
  // An engine streaming text only, one token per chunk, with cumulative completion counts.
  OutputParser parser(options(Protocol::kChatCompletions));
  std::vector<SseEvent> ev;
  const std::vector<std::string> pieces = {"Let", " me", "</think>", "Answer", "."};
  for (size_t i = 0; i < pieces.size(); ++i) {
    OutputChunk c;
    c.text = pieces[i];
    c.completion_tokens = static_cast<int64_t>(i + 1);
    parser.push(c, &ev);
  }
  parser.finish(&ev);
  const json r = parser.response();
  EXPECT_EQ(chat_reasoning(r), 3);
  EXPECT_EQ(r["usage"]["completion_tokens"], 5);
}

}  // namespace
}  // namespace di::recipe
