// Every family fixture driven by the engine (paged KV blocks, chunked prefill, batching, prefix
// caching): greedy output must equal transformers' continuation for every prompt.
#include <gtest/gtest.h>

#include "tests/common/model_checks.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

class FamilyEngine : public ::testing::TestWithParam<FixtureId> {};

TEST_P(FamilyEngine, GreedyThroughTheEngineMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  ASSERT_TRUE(f.meta.contains("family"));
  expect_engine_greedy_matches(f, 16 << 20, 1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FamilyEngine, ::testing::ValuesIn(all_fixtures()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace di::test
