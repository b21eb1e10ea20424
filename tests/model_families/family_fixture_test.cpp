// Every family fixture on the CPU against transformers 5.17 (tests/fixtures/model_<family>): the
// shared parity suite (logits, greedy, prefill + decode, chunking), then batching, rope and errors.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v2/mla_model.h"
#include "engine/model/llama/llama_model.h"
#include "tests/common/model_checks.h"
#include "tests/common/transformers_parity.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

class FamilyFixture : public CpuFixtureTest<FixtureId, load_fixture, 1> {};

TEST_P(FamilyFixture, ModelInfoReportsTheConfigFamily) {
  EXPECT_EQ(model->info().family, f.meta["family"].get<std::string>());
  EXPECT_EQ(model->info().vocab_size, f.vocab);
  ASSERT_EQ(model->cache_groups().size(), 1u);
  EXPECT_EQ(model->cache_groups()[0].kind, engine::CacheKind::kFull);
}

TEST_P(FamilyFixture, BatchedSequencesEqualEachAlone) {
  // Two sequences at different positions in one forward (a decode and a prefill chunk) give the
  // rows each gives alone: nothing leaks between sequences of a batch.
  const int64_t n = static_cast<int64_t>(f.all_ids.size());
  const std::vector<float> alone = run_chunks(*model, f.all_ids, {static_cast<int32_t>(n)});
  const int32_t p = static_cast<int32_t>(f.prompt.size());
  engine::ContiguousSequenceCache a(model->cache_groups(), n), b(model->cache_groups(), n);
  std::vector<float> logits;
  engine::ForwardBatch first;
  first.seqs.push_back({f.all_ids.data(), p, 0, &a, false});
  ASSERT_TRUE(model->forward(first, logits).is_ok());
  engine::ForwardBatch mixed;
  mixed.seqs.push_back({f.all_ids.data() + p, 1, p, &a, true});  // decode one token
  mixed.seqs.push_back({f.all_ids.data(), p + 1, 0, &b, true});  // prefill the same prefix
  ASSERT_TRUE(model->forward(mixed, logits).is_ok());
  ASSERT_EQ(static_cast<int64_t>(logits.size()), (p + 2) * f.vocab);
  EXPECT_LE(row_rel_err(logits.data(), alone.data() + p * f.vocab, f.vocab), 1e-5);
  for (int32_t r = 0; r <= p; ++r)
    EXPECT_LE(row_rel_err(logits.data() + (1 + r) * f.vocab, alone.data() + r * f.vocab, f.vocab), 1e-5) << r;
}

TEST_P(FamilyFixture, RopeMatchesTransformers) {
  const engine::RotaryEmbedding* rope = nullptr;
  if (auto* m = dynamic_cast<engine::llama::LlamaModel*>(model.get())) rope = &m->rope();
  if (auto* m = dynamic_cast<engine::deepseek_v2::MlaModel*>(model.get())) {
    rope = &m->rope();
    EXPECT_NEAR(m->softmax_scale(), f.meta["attention_softmax_scale"].get<double>(), 1e-7);
  }
  ASSERT_TRUE(rope);
  const auto ref = f.meta["rope_inv_freq"].get<std::vector<float>>();
  ASSERT_EQ(ref.size(), rope->inv_freq().size());
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(rope->inv_freq()[i], ref[i], 4e-7 * std::fabs(ref[i])) << "inv_freq[" << i << "]";
  EXPECT_NEAR(rope->attention_scaling(), f.meta["rope_attention_scaling"].get<double>(), 1e-7);
}

TEST_P(FamilyFixture, BadBatchInputIsAnErrorNamingTheField) {
  engine::ContiguousSequenceCache cache(model->cache_groups(), 4);
  std::vector<float> logits;
  const int32_t bad[2] = {1, static_cast<int32_t>(f.vocab)};
  engine::ForwardBatch batch;
  batch.seqs.push_back({bad, 2, 0, &cache, false});
  Status st = model->forward(batch, logits);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("seqs[0].tokens[1]"), std::string::npos) << st.message();
  batch.seqs[0] = {bad, 1, 0, nullptr, false};
  st = model->forward(batch, logits);
  EXPECT_NE(st.message().find("seqs[0].cache"), std::string::npos) << st.message();
  batch.seqs[0] = {bad, 1, model->info().max_position_embeddings, &cache, false};
  st = model->forward(batch, logits);
  EXPECT_NE(st.message().find("max_position_embeddings"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FamilyFixture, ::testing::ValuesIn(all_fixtures()),
                         [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Families, TransformersParity,
                         parity_cases(all_fixtures(), /*num_threads=*/1, /*long_chunk=*/32), parity_case_name);

}  // namespace
}  // namespace di::test
