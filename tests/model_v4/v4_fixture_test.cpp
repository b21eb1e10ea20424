// deepseek_v4 on the CPU against transformers 5.17 (tests/fixtures/model_v4): full-sequence
// logits, greedy continuation, prefill + decode and chunked prefill.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/common/model_checks.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

class V4Fixture : public CpuFixtureTest<std::string, load_fixture, 2> {};

TEST_P(V4Fixture, FullSequenceLogitsMatchTransformers) {
  RecordProperty("worst_rel_err", std::to_string(expect_full_sequence_matches(*model, f, GetParam())));
}

TEST_P(V4Fixture, GreedyContinuationMatchesTransformers) {
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

TEST_P(V4Fixture, PrefillThenDecodeEqualsFullForward) {
  expect_prefill_then_decode_equals_full(*model, f);
}

TEST_P(V4Fixture, AnyChunkingOfThePrefillEqualsOnePrefill) {
  expect_any_chunking_equals_one_prefill(*model, f, 64);
}

TEST_P(V4Fixture, RopeFrequenciesMatchTransformers) {
  const auto& v4 = static_cast<const engine::deepseek_v4::DeepseekV4Model&>(*model);
  const std::pair<const char*, const engine::deepseek_v4::Rope*> ropes[] = {
      {"main", &v4.ropes().main}, {"compress", &v4.ropes().compress}};
  for (const auto& [name, rope] : ropes) {
    const auto ref = f.meta["rope_inv_freq"][name].get<std::vector<float>>();
    ASSERT_EQ(ref.size(), rope->inv_freq().size()) << name;
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_NEAR(rope->inv_freq()[i], ref[i], 4e-7 * std::fabs(ref[i])) << name << "[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V4Fixture, ::testing::ValuesIn(fixture_names()));

}  // namespace
}  // namespace di::test
