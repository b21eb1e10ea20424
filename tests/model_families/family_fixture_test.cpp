// Every family fixture on the CPU against transformers 5.17 (tests/fixtures/model_<family>):
// full-sequence logits, greedy continuation, prefill + decode, chunked prefill, batching, rope.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v2/mla_model.h"
#include "engine/model/llama/llama_model.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

constexpr double kTolerance = 1e-4;  // max|Δlogit| / max|logit|, per position

std::unique_ptr<engine::Model> load(const Fixture& f) {
  engine::ModelOptions opts;
  opts.num_threads = 1;
  auto m = engine::load_model(f.dir, opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

class FamilyFixture : public ::testing::TestWithParam<FixtureId> {};

TEST_P(FamilyFixture, ModelInfoReportsTheConfigFamily) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->info().family, f.meta["family"].get<std::string>());
  EXPECT_EQ(model->info().vocab_size, f.vocab);
  ASSERT_EQ(model->cache_groups().size(), 1u);
  EXPECT_EQ(model->cache_groups()[0].kind, engine::CacheKind::kFull);
}

TEST_P(FamilyFixture, FullSequenceLogitsMatchTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  const std::vector<float> got = run_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  ASSERT_EQ(got.size(), f.logits.size());
  double worst = 0;
  for (size_t r = 0; r < f.all_ids.size(); ++r) {
    const double err = row_rel_err(got.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab);
    worst = std::max(worst, err);
    EXPECT_LE(err, kTolerance) << "position " << r;
  }
  std::printf("%s: worst max|Δ|/max|logit| = %.3g over %zu positions\n", GetParam().name.c_str(), worst,
              f.all_ids.size());
}

TEST_P(FamilyFixture, GreedyContinuationMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  engine::ContiguousSequenceCache cache(model->cache_groups(), static_cast<int64_t>(f.all_ids.size()));
  std::vector<int32_t> ids = f.prompt;
  std::vector<float> logits;
  engine::ForwardBatch prefill;
  prefill.seqs.push_back({ids.data(), static_cast<int32_t>(ids.size()), 0, &cache, false});
  ASSERT_TRUE(model->forward(prefill, logits).is_ok());
  std::vector<int32_t> generated;
  while (generated.size() < f.greedy.size()) {
    ASSERT_EQ(static_cast<int64_t>(logits.size()), f.vocab);
    const int32_t next = argmax(logits.data(), f.vocab);
    generated.push_back(next);
    ids.push_back(next);
    if (generated.size() == f.greedy.size()) break;
    engine::ForwardBatch step;
    step.seqs.push_back({&ids.back(), 1, static_cast<int64_t>(ids.size() - 1), &cache, false});
    ASSERT_TRUE(model->forward(step, logits).is_ok());
  }
  EXPECT_EQ(generated, f.greedy);
}

TEST_P(FamilyFixture, PrefillThenDecodeEqualsFullForward) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  const std::vector<float> full = run_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  std::vector<int32_t> chunks = {static_cast<int32_t>(f.prompt.size())};
  chunks.insert(chunks.end(), f.greedy.size(), 1);
  const std::vector<float> stepped = run_chunks(*model, f.all_ids, chunks);
  ASSERT_EQ(stepped.size(), full.size());
  for (size_t r = 0; r < f.all_ids.size(); ++r) {
    EXPECT_LE(row_rel_err(stepped.data() + r * f.vocab, full.data() + r * f.vocab, f.vocab), 1e-5) << "row " << r;
    EXPECT_LE(row_rel_err(stepped.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab), kTolerance)
        << "row " << r;
  }
}

TEST_P(FamilyFixture, AnyChunkingOfThePrefillEqualsOnePrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  const std::vector<float> full = run_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  for (const std::vector<int32_t>& chunks :
       std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {5, 1, 7}, {13}, {32, 1}}) {
    const std::vector<float> got = run_chunks(*model, f.all_ids, chunks);
    ASSERT_EQ(got.size(), full.size());
    EXPECT_LE(worst_rel_err(got, full, f.vocab), 1e-5) << "chunks starting " << chunks[0];
  }
}

TEST_P(FamilyFixture, BatchedSequencesEqualEachAlone) {
  // Two sequences at different positions in one forward (a decode and a prefill chunk) give the
  // rows each gives alone: nothing leaks between sequences of a batch.
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
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
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
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
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
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

}  // namespace
}  // namespace di::test
