// Every family fixture driven by the engine (paged KV blocks, chunked prefill, batching, prefix
// caching): greedy output must equal transformers' continuation for every prompt.
#include <gtest/gtest.h>

#include "engine/llm.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

class FamilyEngine : public ::testing::TestWithParam<FixtureId> {};

TEST_P(FamilyEngine, GreedyThroughTheEngineMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  engine::EngineConfig config;
  config.block_size = 16;
  config.max_num_batched_tokens = 24;  // forces chunked prefill and mixed prefill/decode steps
  config.max_num_seqs = 4;
  config.kv_cache_bytes = 16 << 20;
  engine::ModelOptions options;
  options.num_threads = 1;
  auto llm = engine::LLM::load(f.dir, config, options);
  ASSERT_TRUE(llm.is_ok()) << llm.status().message();
  EXPECT_EQ((*llm)->engine().info().model.family, f.meta["family"].get<std::string>());
  engine::SamplingParams params;
  params.temperature = 0;
  params.max_tokens = static_cast<int64_t>(f.greedy.size());
  params.ignore_eos = true;
  // The same prompt three times: batched decoding, and prefix-cache hits on the later copies.
  auto out = (*llm)->generate({f.prompt, f.prompt, f.prompt}, params);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  for (const auto& r : *out) {
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].token_ids, f.greedy) << "request " << r.request_id << " error " << r.outputs[0].error;
  }
  auto again = (*llm)->generate({f.prompt}, params);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_GT((*again)[0].num_cached_tokens, 0);
  EXPECT_EQ((*again)[0].outputs[0].token_ids, f.greedy);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FamilyEngine, ::testing::ValuesIn(all_fixtures()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace di::test
