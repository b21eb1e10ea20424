// deepseek_v2 / deepseek_v3 on the GPU against the CPU MLA model and transformers' fp32 fixtures
// (tests/fixtures/model_deepseek_v2, model_deepseek_v3): logits, greedy continuation, chunked
// prefill and decode through device caches, batching, the engine end to end (paged device
// blocks, preemption), and a layer-by-layer comparison that names the first layer where the GPU
// leaves the CPU.
#include <gtest/gtest.h>

#include "kernels/cuda/device.h"
#include "tests/common/model_checks.h"
#include "tests/cuda/device_model_util.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

constexpr double kTolerance = 1e-4;  // max|Δlogit| / max|logit| per row

class MlaCuda : public ::testing::TestWithParam<FixtureId> {
 protected:
  void SetUp() override {
    if (kernels::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(MlaCuda, FullSequenceLogitsMatchCpuAndTransformers) {
  const Fixture f = load_fixture(GetParam());
  std::vector<float> got, ref;
  ASSERT_TRUE(logits_on_cuda_and_cpu(f.dir, f.all_ids, &got, &ref));
  ASSERT_EQ(got.size(), f.logits.size());
  ASSERT_EQ(ref.size(), f.logits.size());
  const double vs_cpu = worst_rel_err(got, ref, f.vocab), vs_hf = worst_rel_err(got, f.logits, f.vocab);
  std::printf("%s (cuda fp32): worst rel err vs cpu %.3g (first row over: %lld), vs transformers %.3g\n",
              GetParam().name.c_str(), vs_cpu, static_cast<long long>(first_bad_row(got, ref, f.vocab, kTolerance)),
              vs_hf);
  EXPECT_LE(vs_cpu, kTolerance);
  EXPECT_LE(vs_hf, kTolerance);
}

// Truncated copies of the checkpoint (the first k layers) on both devices: the first k whose
// logits differ names the layer (dense or MoE) to look at.
TEST_P(MlaCuda, LayerByLayerAgreesWithCpu) {
  const Fixture f = load_fixture(GetParam());
  const json config = read_config(GetParam());
  const std::vector<RawTensor> tensors = read_all(f.dir);
  const int n_layers = config["num_hidden_layers"].get<int>();
  int first_bad = -1;
  for (int k = 1; k <= n_layers; ++k) {
    json c = config;
    c["num_hidden_layers"] = k;
    if (c.contains("num_nextn_predict_layers")) c["num_nextn_predict_layers"] = 0;  // MTP layers dropped too
    std::vector<RawTensor> kept;
    for (const RawTensor& t : tensors) {
      bool drop = false;
      for (int l = k; l < n_layers + 8; ++l) drop |= t.name.rfind("model.layers." + std::to_string(l) + ".", 0) == 0;
      if (!drop) kept.push_back(t);
    }
    const std::string dir = make_model_dir("mla_layers_" + GetParam().name + "_" + std::to_string(k), c, kept);
    std::vector<float> got, ref;
    ASSERT_TRUE(logits_on_cuda_and_cpu(dir, f.all_ids, &got, &ref));
    const double err = worst_rel_err(got, ref, f.vocab);
    std::printf("%s: layers 0..%d: worst rel err vs cpu %.3g, first row over: %lld\n", GetParam().name.c_str(), k - 1,
                err, static_cast<long long>(first_bad_row(got, ref, f.vocab, kTolerance)));
    if (err > kTolerance && first_bad < 0) first_bad = k - 1;
  }
  EXPECT_EQ(first_bad, -1) << "first differing layer: " << first_bad;
}

TEST_P(MlaCuda, GreedyDecodeMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  EXPECT_EQ(greedy_on_device(*model, f), f.greedy);
}

TEST_P(MlaCuda, AnyChunkingEqualsOnePrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  const std::vector<float> full = run_device_chunks(*model, f.all_ids, {static_cast<int32_t>(f.all_ids.size())});
  std::vector<int32_t> decode = {static_cast<int32_t>(f.prompt.size())};
  decode.insert(decode.end(), f.greedy.size(), 1);
  for (const std::vector<int32_t>& chunks : std::vector<std::vector<int32_t>>{{1}, {3}, {5, 1, 7}, decode}) {
    const std::vector<float> got = run_device_chunks(*model, f.all_ids, chunks);
    ASSERT_EQ(got.size(), full.size());
    const double err = worst_rel_err(got, full, f.vocab);
    std::printf("%s (cuda): chunks starting %d: worst rel err vs one prefill %.3g\n", GetParam().name.c_str(),
                chunks[0], err);
    EXPECT_LE(err, kTolerance) << "chunks starting " << chunks[0];
  }
}

TEST_P(MlaCuda, BatchedSequencesEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_batched_equals_alone(*model, f, kTolerance);
}

TEST_P(MlaCuda, EngineGreedyWithPagingAndPreemptionMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  expect_engine_greedy_with_preemption(f, "cuda");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MlaCuda, ::testing::ValuesIn(mla_fixtures()));

}  // namespace
}  // namespace di::test
