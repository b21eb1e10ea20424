// deepseek_v4 driven by the engine (paged blocks + per-sequence slots, chunked prefill, prefix
// caching, batching): greedy output must equal transformers' continuation for every prompt.
#include <gtest/gtest.h>

#include "tests/common/model_checks.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

class V4Engine : public ::testing::TestWithParam<std::string> {};

TEST_P(V4Engine, GreedyThroughTheEngineMatchesTransformers) {
  expect_engine_greedy_matches(load_fixture(GetParam()), 64 << 20, 2);
}

TEST_P(V4Engine, GreedyWithPreemptionMatchesTransformers) {
  expect_engine_greedy_with_preemption(load_fixture(GetParam()), "cpu");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V4Engine, ::testing::ValuesIn(fixture_names()));

}  // namespace
}  // namespace di::test
