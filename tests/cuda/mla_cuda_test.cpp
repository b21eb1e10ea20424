// deepseek_v2 / deepseek_v3 on the GPU against the CPU MLA model and transformers' fp32 fixtures
// (tests/fixtures/model_deepseek_v2, model_deepseek_v3): logits, greedy continuation, chunked
// prefill and decode through device caches, batching, the engine end to end (paged device
// blocks, preemption), and a layer-by-layer comparison that names the first layer where the GPU
// leaves the CPU.
#include <gtest/gtest.h>

#include "kernels/cuda/device.h"
#include "tests/common/model_checks.h"
#include "tests/cuda/cuda_vs_cpu.h"
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
  expect_cuda_matches_cpu_and_transformers(load_fixture(GetParam()), GetParam().name, kTolerance, kTolerance);
}

// Truncated copies of the checkpoint (the first k layers) on both devices: the first k whose
// logits differ names the layer (dense or MoE) to look at.
TEST_P(MlaCuda, LayerByLayerAgreesWithCpu) {
  const Fixture f = load_fixture(GetParam());
  const json config = read_config(GetParam());
  const std::vector<RawTensor> tensors = read_all(f.dir);
  const int n_layers = config["num_hidden_layers"].get<int>();
  auto make_dir = [&](int k) {
    json c = config;
    c["num_hidden_layers"] = k;
    if (c.contains("num_nextn_predict_layers")) c["num_nextn_predict_layers"] = 0;  // MTP layers dropped too
    std::vector<RawTensor> kept;
    for (const RawTensor& t : tensors) {
      bool drop = false;
      for (int l = k; l < n_layers + 8; ++l) drop |= t.name.rfind("model.layers." + std::to_string(l) + ".", 0) == 0;
      if (!drop) kept.push_back(t);
    }
    return make_model_dir("mla_layers_" + GetParam().name + "_" + std::to_string(k), c, kept);
  };
  expect_layer_by_layer_agrees(f, GetParam().name, n_layers, kTolerance, make_dir, [](int) { return std::string(); });
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
  expect_device_chunking_equals_one_prefill(*model, f, GetParam().name,
                                            {{1}, {3}, {5, 1, 7}, prefill_then_decode_chunks(f)}, kTolerance);
}

TEST_P(MlaCuda, BatchedSequencesEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_batched_equals_alone(*model, f, kTolerance);
}

TEST_P(MlaCuda, EngineSeededSamplingOnTheDeviceEqualsTheCpu) {
  const Fixture f = load_fixture(GetParam());
  expect_engine_sampling_same_on_cpu_and(f, "cuda");
}

TEST_P(MlaCuda, EngineGreedyWithPagingAndPreemptionMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  expect_engine_greedy_with_preemption(f, "cuda");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MlaCuda, ::testing::ValuesIn(mla_fixtures()));

}  // namespace
}  // namespace di::test
