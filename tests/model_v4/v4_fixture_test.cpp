// deepseek_v4 on the CPU against transformers 5.17 (tests/fixtures/model_v4): full-sequence
// logits, greedy continuation, prefill + decode and chunked prefill.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/common/model_checks.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

std::unique_ptr<engine::Model> load(const Fixture& f) {
  engine::ModelOptions opts;
  opts.num_threads = 2;
  auto m = engine::load_model(f.dir, opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

class V4Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(V4Fixture, FullSequenceLogitsMatchTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  RecordProperty("worst_rel_err", std::to_string(expect_full_sequence_matches(*model, f, GetParam())));
}

TEST_P(V4Fixture, GreedyContinuationMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  EXPECT_EQ(greedy_continuation(*model, f), f.greedy);
}

TEST_P(V4Fixture, PrefillThenDecodeEqualsFullForward) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  expect_prefill_then_decode_equals_full(*model, f);
}

TEST_P(V4Fixture, AnyChunkingOfThePrefillEqualsOnePrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  expect_any_chunking_equals_one_prefill(*model, f, 64);
}

TEST_P(V4Fixture, RopeFrequenciesMatchTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
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
