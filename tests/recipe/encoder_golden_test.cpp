// Every reference-encoder record, replayed through the C++ renderers: prompts byte-exact,
// failures rejected.
#include <gtest/gtest.h>

#include "recipe/encoding/encoder.h"
#include "tests/recipe/golden.h"

namespace di::recipe {
namespace {

using ordered_json = nlohmann::ordered_json;

// Returns the number of records checked; reports every mismatch.
size_t replay(const std::string& name) {
  auto enc = parse_encoding(name);
  EXPECT_TRUE(enc.is_ok());
  auto records = testing::load_golden(name);
  EXPECT_GE(records.size(), 40u) << name;
  for (const auto& r : records) {
    SCOPED_TRACE(r["id"].get<std::string>());
    auto opts = parse_encode_kwargs(*enc, r["input"]["kwargs"]);
    Result<RenderedPrompt> got = opts.is_ok()
        ? encode_messages(*enc, r["input"]["messages"], *opts)
        : Result<RenderedPrompt>(opts.status());
    if (r.contains("error")) {
      EXPECT_FALSE(got.is_ok()) << "expected failure: " << r["error"].get<std::string>();
      continue;
    }
    EXPECT_TRUE(got.is_ok()) << got.status().message();
    if (!got.is_ok()) continue;
    EXPECT_EQ(got->str(), r["prompt"].get<std::string>());
    if (r.contains("multi_modal_data")) {
      EXPECT_EQ(got->multi_modal_data, r["multi_modal_data"]);
    }
  }
  return records.size();
}

TEST(EncoderGolden, Dsv32MatchesReferenceEncoder) { EXPECT_EQ(replay("dsv32"), 40u); }
TEST(EncoderGolden, Dsv4MatchesReferenceEncoder) { EXPECT_EQ(replay("dsv4"), 40u); }
TEST(EncoderGolden, Dsv41MatchesReferenceEncoder) { EXPECT_EQ(replay("dsv41"), 40u); }

// Segments concatenate to the prompt and alternate kinds (adjacent equal kinds are merged).
TEST(EncoderGolden, SegmentsAlternateAndCoverThePrompt) {
  for (const char* name : {"dsv32", "dsv4", "dsv41"}) {
    Encoding enc = *parse_encoding(name);
    for (const auto& r : testing::load_golden(name)) {
      if (r.contains("error")) continue;
      auto opts = parse_encode_kwargs(enc, r["input"]["kwargs"]);
      ASSERT_TRUE(opts.is_ok());
      auto got = encode_messages(enc, r["input"]["messages"], *opts);
      ASSERT_TRUE(got.is_ok());
      for (size_t i = 1; i < got->segments.size(); ++i)
        EXPECT_NE(got->segments[i].special, got->segments[i - 1].special);
      for (const auto& s : got->segments) EXPECT_FALSE(s.text.empty());
    }
  }
}

}  // namespace
}  // namespace di::recipe
