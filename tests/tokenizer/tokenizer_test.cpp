// Tokenizer behaviour: known ids from third-party encoders, the three encode modes, decode,
// token lookups, tokenizer_config.json, and clear errors for malformed or unsupported files.
#include "recipe/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <functional>

#include "recipe/tokenizer/stream_decoder.h"
#include "tests/tokenizer/tiny_tokenizer.h"
#include "tests/tokenizer/tokenizer_files.h"

namespace di::recipe {
namespace {

using testing::added_token;
using testing::tiny_tokenizer;
using testing::tokenizer_dir;
using Ids = std::vector<int32_t>;

std::shared_ptr<const Tokenizer> load(const std::string& name) {
  auto t = Tokenizer::load(tokenizer_dir(name));
  EXPECT_TRUE(t.is_ok()) << t.status().message() << " (run scripts/bootstrap.sh)";
  return t.is_ok() ? *t : nullptr;
}

std::shared_ptr<const Tokenizer> from(const nlohmann::json& j, const std::string& config = {}) {
  auto t = Tokenizer::from_json(j.dump(), config);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.is_ok() ? *t : nullptr;
}

// Reference ids from @huggingface/tokenizers 0.2.0 on the same files.
TEST(Tokenizer, DeepSeekV3MatchesPublishedReferenceIds) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("Hello, world! 12345 你好世界こんにちはカタカナ", true),
            (Ids{19923, 14, 2058, 3, 223, 6895, 1883, 223, 30594, 3427, 4549, 7245, 2298, 12457,
                 2841, 15961, 11767, 15961, 27071}));
  EXPECT_EQ(*t->encode("<｜User｜>hi<｜Assistant｜>", true), (Ids{128803, 6366, 128804}));
}

TEST(Tokenizer, Llama3AndQwen3MatchPublishedReferenceIds) {
  auto llama = load("llama3");
  auto qwen = load("qwen3");
  ASSERT_TRUE(llama && qwen);
  EXPECT_EQ(*llama->encode("Hello, world! 12345 你好世界こんにちはカタカナ", true),
            (Ids{9906, 11, 1917, 0, 220, 4513, 1774, 118195, 53901, 102616, 90115, 71493, 47307,
                 71493, 96452}));
  EXPECT_EQ(*qwen->encode("Hello, world! 12345 你好世界こんにちはカタカナ", true),
            (Ids{9707, 11, 1879, 0, 220, 16, 17, 18, 19, 20, 220, 108386, 99489, 89015, 70393,
                 46207, 70393, 95352}));
  EXPECT_EQ(*qwen->encode("<|im_start|>user\nhi<|im_end|>", true),
            (Ids{151644, 872, 198, 6023, 151645}));
}

// The DeepSeek recipe fork's test: user text "<｜User｜>" is five plain-text ids.
TEST(Tokenizer, UserTypedControlTokenTextEncodesAsPlainText) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("<｜User｜>", false), (Ids{30, 28217, 6756, 28217, 32}));
  EXPECT_EQ(*t->encode("<｜User｜>", true), (Ids{128803}));
}

TEST(Tokenizer, SegmentsEncodeSeparatelyAndReportTemplateRanges) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  const std::vector<Segment> segs = {{"<｜begin▁of▁sentence｜>", true},
                                     {"<｜User｜>", true},
                                     {"say <｜Assistant｜> now", false},
                                     {"", true},
                                     {"<｜Assistant｜>", true}};
  auto r = t->encode_segments(segs);
  ASSERT_TRUE(r.is_ok());
  Ids expected = {0, 128803};
  const Ids content = *t->encode("say <｜Assistant｜> now", false);
  expected.insert(expected.end(), content.begin(), content.end());
  expected.push_back(128804);
  EXPECT_EQ(r->ids, expected);
  const uint32_t n = static_cast<uint32_t>(expected.size());
  EXPECT_EQ(r->special_ranges, (std::vector<TokenRange>{{0, 2}, {n - 1, n}}));
  for (size_t i = 2; i + 1 < expected.size(); ++i) EXPECT_FALSE(t->is_added(expected[i]));
}

TEST(Tokenizer, SegmentErrorNamesTheSegment) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  const std::vector<Segment> segs = {{"ok", true}, {"\xff", false}};
  auto r = t->encode_segments(segs);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("segments[1]"), std::string::npos) << r.status().message();
}

TEST(Tokenizer, DecodeSkipsOnlyTokensMarkedSpecial) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  const Ids ids = {0, 128803, 6366, 128804, 1};  // BOS and EOS are special; User/Assistant not
  EXPECT_EQ(*t->decode(ids, false),
            "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><｜end▁of▁sentence｜>");
  EXPECT_EQ(*t->decode(ids, true), "<｜User｜>hi<｜Assistant｜>");
}

TEST(Tokenizer, InvalidIdsAreErrorsNamingTheIndex) {
  auto t = load("deepseek_v3");
  ASSERT_TRUE(t);
  auto r = t->decode(Ids{19923, -1}, false);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ids[1]"), std::string::npos);
  EXPECT_FALSE(t->decode(Ids{static_cast<int32_t>(t->vocab_size())}, false).is_ok());
  EXPECT_FALSE(t->token_bytes(-5).is_ok());
  EXPECT_EQ(t->vocab_size(), 128815);
}

TEST(Tokenizer, InvalidUtf8TextIsAnError) {
  auto t = load("llama3");
  ASSERT_TRUE(t);
  auto r = t->encode("ab\xC3(", true);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(Tokenizer, TokenBytesUndoTheByteLevelSpelling) {
  auto t = load("llama3");
  ASSERT_TRUE(t);
  const auto the = t->token_to_id("Ġthe");
  ASSERT_TRUE(the);
  EXPECT_EQ(*t->token_bytes(*the), " the");
  EXPECT_EQ(*t->token_bytes(128000), "<|begin_of_text|>");
  EXPECT_EQ(t->token_to_id("<|eot_id|>"), 128009);
  EXPECT_FALSE(t->token_to_id("no such token"));
  EXPECT_EQ(t->all_token_bytes().size(), static_cast<size_t>(t->vocab_size()));
  EXPECT_TRUE(t->is_special(128009));
  EXPECT_FALSE(t->is_special(*the));
}

TEST(Tokenizer, ConfigGivesBosEosAndAddBosToken) {
  auto ds = load("deepseek_v3");
  auto qwen = load("qwen3");
  auto llama = load("llama3");
  ASSERT_TRUE(ds && qwen && llama);
  EXPECT_EQ(ds->bos_id(), 0);
  EXPECT_EQ(ds->eos_id(), 1);
  EXPECT_TRUE(ds->add_bos_token());  // LlamaTokenizerFast with add_bos_token: true
  EXPECT_EQ((*ds->encode("hi", EncodeOptions{true, true}))[0], 0);
  EXPECT_EQ(*ds->encode("hi", EncodeOptions{true, false}), *ds->encode("hi", true));
  EXPECT_FALSE(qwen->bos_id());
  EXPECT_EQ(qwen->eos_id(), 151645);
  EXPECT_FALSE(qwen->add_bos_token());
  EXPECT_EQ(llama->bos_id(), 128000);
  EXPECT_FALSE(llama->add_bos_token());  // this revision's post-processor adds nothing
}

TEST(Tokenizer, MergesAsStringsAndAsArraysGiveTheSameIds) {
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"}};
  auto a = from(tiny_tokenizer(merges, false));
  auto b = from(tiny_tokenizer(merges, true));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a->encode("hello world", true), *b->encode("hello world", true));
  // "hello" -> he, ll, hell, hello (ids 256.. in order); " world" -> " w" + bytes.
  EXPECT_EQ(*a->encode("hello world", true), (Ids{259, 260, 'o', 'r', 'l', 'd'}));
}

TEST(Tokenizer, MergesApplyLowestRankFirstThenLeftmost) {
  // "aaa": (a,a) merges at the leftmost pair first: [aa, a].
  auto t = from(tiny_tokenizer({{"a", "a"}}));
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("aaa", true), (Ids{256, 'a'}));
  // Rank decides over position: (b,c) outranks (a,b), so "abc" -> [a, bc].
  auto u = from(tiny_tokenizer({{"b", "c"}, {"a", "b"}}));
  ASSERT_TRUE(u);
  EXPECT_EQ(*u->encode("abc", true), (Ids{'a', 256}));
}

TEST(Tokenizer, IgnoreMergesTakesAWholeWordFromTheVocab) {
  auto j = tiny_tokenizer({{"a", "b"}});
  j["model"]["vocab"][byte_level_encode("abc")] = 300;
  auto plain = from(j);
  j["model"]["ignore_merges"] = true;
  auto ignoring = from(j);
  ASSERT_TRUE(plain && ignoring);
  EXPECT_EQ(*plain->encode("abc", true), (Ids{256, 'c'}));  // no merge path reaches "abc"
  EXPECT_EQ(*ignoring->encode("abc", true), (Ids{300}));
}

TEST(Tokenizer, ByteFallbackReplacesBytesMissingFromTheVocab) {
  auto j = tiny_tokenizer({});
  j["model"]["vocab"].erase(byte_level_encode("\xE2"));
  j["model"]["vocab"]["<0xE2>"] = 400;
  auto dropping = from(j);
  j["model"]["byte_fallback"] = true;
  auto falling_back = from(j);
  ASSERT_TRUE(dropping && falling_back);
  EXPECT_EQ(*dropping->encode("\xE2\x82\xAC", true), (Ids{0x82, 0xAC}));
  EXPECT_EQ(*falling_back->encode("\xE2\x82\xAC", true), (Ids{400, 0x82, 0xAC}));
}

TEST(Tokenizer, TemplateProcessingAddsItsTokensOnlyWhenAsked) {
  auto j = tiny_tokenizer({});
  j["added_tokens"] = {added_token(500, "<s>", true), added_token(501, "</s>", true)};
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                  {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                  {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
      {"pair", nlohmann::json::array()},
      {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {500}}, {"tokens", {"<s>"}}}},
                          {"</s>", {{"id", "</s>"}, {"ids", {501}}, {"tokens", {"</s>"}}}}}}};
  auto t = from(j, R"({"bos_token": "<s>", "eos_token": {"content": "</s>"}})");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("x", EncodeOptions{true, true}), (Ids{500, 'x', 501}));
  EXPECT_EQ(*t->encode("x", EncodeOptions{true, false}), (Ids{'x'}));
  EXPECT_TRUE(t->add_bos_token());
  EXPECT_EQ(t->eos_id(), 501);
}

TEST(Tokenizer, AddedTokenStripAndSingleWordFollowTheirFlags) {
  auto j = tiny_tokenizer({});
  auto strip = added_token(600, "<m>", true);
  strip["lstrip"] = true;
  strip["rstrip"] = true;
  auto word = added_token(601, "cat", false);
  word["single_word"] = true;
  j["added_tokens"] = {strip, word};
  auto t = from(j);
  ASSERT_TRUE(t);
  // lstrip/rstrip swallow the whitespace around the token.
  EXPECT_EQ(*t->encode("a  <m>  b", true), (Ids{'a', 600, 'b'}));
  // single_word: only a match not inside a word counts.
  EXPECT_EQ(*t->encode("a cat", true), (Ids{'a', ' ', 601}));
  EXPECT_EQ(*t->encode("cats", true), (Ids{'c', 'a', 't', 's'}));
}

TEST(Tokenizer, LongestAddedTokenWinsAtTheLeftmostPosition) {
  auto j = tiny_tokenizer({});
  j["added_tokens"] = {added_token(700, "<a>", true), added_token(701, "<a><b>", true),
                       added_token(702, "b>", false)};
  auto t = from(j);
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("x<a><b>b>", true), (Ids{'x', 701, 702}));
  EXPECT_EQ(*t->encode("<a><", true), (Ids{700, '<'}));
}

TEST(Tokenizer, NfcNormalizerComposesBeforeSplitting) {
  auto t = load("qwen3");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->encode("e\xCC\x81", true), *t->encode("\xC3\xA9", true));
  EXPECT_EQ(*t->decode(*t->encode("e\xCC\x81", true), false), "\xC3\xA9");
}

TEST(StreamDecoder, HoldsBackAnIncompleteCharacter) {
  auto t = from(tiny_tokenizer({}));
  ASSERT_TRUE(t);
  StreamDecoder d(t);
  EXPECT_EQ(*d.push(0xE2), "");
  EXPECT_EQ(*d.push(0x82), "");
  EXPECT_EQ(d.pending_bytes(), 2u);
  EXPECT_FALSE(d.push(99999).is_ok());  // an invalid id changes nothing
  EXPECT_EQ(*d.push(0xAC), "€");
  EXPECT_EQ(*d.push(0xE2), "");
  EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");  // the stream ended inside a character
}

TEST(TokenizerLoad, MissingPathIsNotFound) {
  auto r = Tokenizer::load("/nonexistent/dir");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// Each malformed or unsupported file gives its code and a message naming the component.
struct BadFile {
  const char* what;
  std::function<void(nlohmann::json&)> edit;
  StatusCode code;
  const char* names;
};

TEST(TokenizerLoad, MalformedAndUnsupportedFilesAreClearErrors) {
  const std::vector<BadFile> cases = {
      {"model missing", [](auto& j) { j.erase("model"); }, StatusCode::kParse, "model"},
      {"model type", [](auto& j) { j["model"]["type"] = "WordPiece"; }, StatusCode::kUnsupported, "WordPiece"},
      {"dropout", [](auto& j) { j["model"]["dropout"] = 0.1; }, StatusCode::kUnsupported, "dropout"},
      {"bad merge", [](auto& j) { j["model"]["merges"] = {"a b c"}; }, StatusCode::kParse, "model.merges[0]"},
      {"merge not in vocab", [](auto& j) { j["model"]["merges"] = {"Ġ zz"}; }, StatusCode::kParse, "zz"},
      {"vocab id", [](auto& j) { j["model"]["vocab"]["x"] = "seven"; }, StatusCode::kParse, "model.vocab"},
      {"normalizer", [](auto& j) { j["normalizer"] = {{"type", "Lowercase"}}; }, StatusCode::kUnsupported, "Lowercase"},
      {"regex", [](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+"; },
       StatusCode::kUnsupported, "pre_tokenizer.pretokenizers[0].pattern.Regex"},
      {"pre-tokenizer", [](auto& j) { j["pre_tokenizer"] = {{"type", "Whitespace"}}; }, StatusCode::kUnsupported, "Whitespace"},
      {"no ByteLevel", [](auto& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }, StatusCode::kUnsupported, "ByteLevel"},
      {"decoder", [](auto& j) { j["decoder"] = {{"type", "WordPiece"}}; }, StatusCode::kUnsupported, "decoder"},
      {"post-processor", [](auto& j) { j["post_processor"] = {{"type", "BertProcessing"}}; }, StatusCode::kUnsupported, "post_processor"},
      {"added token", [](auto& j) { j["added_tokens"] = {{{"id", 5}}}; }, StatusCode::kParse, "added_tokens[0]"},
      {"behavior", [](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"; },
       StatusCode::kParse, "behavior"},
  };
  for (const BadFile& c : cases) {
    auto j = tiny_tokenizer({});
    c.edit(j);
    auto r = Tokenizer::from_json(j.dump());
    ASSERT_FALSE(r.is_ok()) << c.what;
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(c.names), std::string::npos)
        << c.what << ": " << r.status().message();
  }
  auto r = Tokenizer::from_json("{\"model\": ");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParse);
}

}  // namespace
}  // namespace di::recipe
