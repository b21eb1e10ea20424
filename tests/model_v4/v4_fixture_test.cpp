// deepseek_v4 on the CPU against transformers 5.17 (tests/fixtures/model_v4): the shared parity
// suite (logits, greedy, prefill + decode, chunking) and both ropes' frequencies.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/common/model_checks.h"
#include "tests/common/transformers_parity.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

class V4Fixture : public CpuFixtureTest<std::string, load_fixture, 2> {};

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

// Chunks of 64 reach past the fixtures' compression blocks and sliding windows.
INSTANTIATE_TEST_SUITE_P(V4, TransformersParity, parity_cases(v4_fixtures(), /*num_threads=*/2, /*long_chunk=*/64),
                         parity_case_name);

}  // namespace
}  // namespace di::test
