// deepseek_v4 on the CPU against transformers 5.17 (tests/fixtures/model_v4): full-sequence
// logits, greedy continuation, prefill + decode and chunked prefill.
#include <gtest/gtest.h>

#include "engine/model/deepseek_v4/v4_model.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

constexpr double kTolerance = 1e-4;  // max|Δlogit| / max|logit|, per position

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
  const std::vector<float> got = run_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  ASSERT_EQ(got.size(), f.logits.size());
  double worst = 0;
  for (size_t r = 0; r < f.all_ids.size(); ++r) {
    const double err = row_rel_err(got.data() + r * f.vocab, f.logits.data() + r * f.vocab, f.vocab);
    worst = std::max(worst, err);
    EXPECT_LE(err, kTolerance) << "position " << r;
  }
  RecordProperty("worst_rel_err", std::to_string(worst));
  std::printf("%s: worst max|Δ|/max|logit| = %.3g over %zu positions\n", GetParam().c_str(), worst,
              f.all_ids.size());
}

TEST_P(V4Fixture, GreedyContinuationMatchesTransformers) {
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

TEST_P(V4Fixture, PrefillThenDecodeEqualsFullForward) {
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

TEST_P(V4Fixture, AnyChunkingOfThePrefillEqualsOnePrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load(f);
  ASSERT_TRUE(model);
  const std::vector<float> full = run_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  for (const std::vector<int32_t>& chunks :
       std::vector<std::vector<int32_t>>{{1}, {2}, {3}, {5, 1, 7}, {13}, {64, 1}}) {
    const std::vector<float> got = run_chunks(*model, f.all_ids, chunks);
    ASSERT_EQ(got.size(), full.size());
    double worst = 0;
    for (size_t r = 0; r < f.all_ids.size(); ++r)
      worst = std::max(worst, row_rel_err(got.data() + r * f.vocab, full.data() + r * f.vocab, f.vocab));
    EXPECT_LE(worst, 1e-5) << "chunks starting " << chunks[0];
  }
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
