// deepseek_v4 on the GPU against the CPU model and transformers' fp32 fixtures
// (tests/fixtures/model_v4): logits, greedy continuation, chunked prefill and decode through
// device caches, batching, the engine end to end (paged device blocks and slots, preemption), a
// layer-by-layer comparison that names the first layer where the GPU leaves the CPU, and a bf16
// copy of each checkpoint against the CPU fp32 run on the same rounded weights.
#include <gtest/gtest.h>

#include "kernels/cuda/device.h"
#include "tests/common/model_checks.h"
#include "tests/cuda/bf16_checkpoint.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/cuda_vs_cpu.h"
#include "tests/cuda/device_model_util.h"
#include "tests/model_v4/fixture_util.h"

namespace di::test {
namespace {

constexpr double kVsCpu = 1e-5;  // max|Δlogit| / max|logit| per row, GPU vs CPU fp32

class V4Cuda : public CudaTestWithParam<std::string> {};

TEST_P(V4Cuda, FullSequenceLogitsMatchCpuAndTransformers) {
  expect_cuda_matches_cpu_and_transformers(load_fixture(GetParam()), GetParam(), kVsCpu, kFixtureTolerance);
}

// Truncated copies of the checkpoint (the first k layers, k = 1..N) on both devices: the first k
// whose logits differ names the layer (and its attention and MoE types) to look at.
TEST_P(V4Cuda, LayerByLayerAgreesWithCpu) {
  const Fixture f = load_fixture(GetParam());
  const json config = read_config(GetParam());
  const std::vector<RawTensor> tensors = read_all(f.dir);
  const int n_layers = config["num_hidden_layers"].get<int>();
  auto make_dir = [&](int k) {
    json c = config;
    c["num_hidden_layers"] = k;
    for (const char* key : {"layer_types", "mlp_layer_types"}) {
      json t = json::array();
      for (int l = 0; l < k; ++l) t.push_back(config[key][l]);
      c[key] = t;
    }
    std::vector<RawTensor> kept;
    for (const RawTensor& t : tensors) {
      bool drop = false;
      for (int l = k; l < n_layers; ++l)
        for (const std::string& p : {"model.layers." + std::to_string(l) + ".", "layers." + std::to_string(l) + "."})
          drop |= t.name.rfind(p, 0) == 0;
      if (!drop) kept.push_back(t);
    }
    return make_model_dir("layers_" + GetParam() + "_" + std::to_string(k), GetParam(), kept, &c);
  };
  auto describe = [&](int k) {
    return " (last: " + config["layer_types"][k - 1].get<std::string>() + " / " +
           config["mlp_layer_types"][k - 1].get<std::string>() + ")";
  };
  expect_layer_by_layer_agrees(f, GetParam(), n_layers, kVsCpu, make_dir, describe);
}

TEST_P(V4Cuda, GreedyDecodeMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  const std::vector<int32_t> generated = greedy_on_device(*model, f);
  ASSERT_EQ(generated.size(), f.greedy.size());
  int agree = 0;
  for (size_t i = 0; i < generated.size(); ++i) agree += generated[i] == f.greedy[i];
  std::printf("%s (cuda): greedy tokens equal to transformers: %d/%zu\n", GetParam().c_str(), agree, f.greedy.size());
  EXPECT_EQ(generated, f.greedy);
}

TEST_P(V4Cuda, AnyChunkingEqualsOnePrefill) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_device_chunking_equals_one_prefill(
      *model, f, GetParam(), {{1}, {2}, {3}, {5, 1, 7}, {13}, {64, 1}, prefill_then_decode_chunks(f)}, kSelfTolerance);
}

TEST_P(V4Cuda, BatchedSequencesEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_batched_equals_alone(*model, f, kSelfTolerance);
}

// Decode steps of several sequences replay CUDA graphs of a padded batch bucket (3 sequences run
// in the graph of 4, its last row padding); each row must equal the sequence run alone, with
// graphs and with enforce_eager.
TEST_P(V4Cuda, BatchedDecodeGraphsEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  const int64_t n = static_cast<int64_t>(f.all_ids.size());
  for (bool eager : {false, true}) {
    engine::ModelOptions opts;
    opts.device = "cuda";
    opts.enforce_eager = eager;
    auto loaded = engine::load_model(f.dir, opts);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
    engine::Model& model = **loaded;
    const std::vector<float> alone = run_device_chunks(model, f.all_ids, {static_cast<int32_t>(n)});
    const int32_t p = static_cast<int32_t>(f.prompt.size());
    ASSERT_GE(p, 3);
    std::vector<std::unique_ptr<engine::SequenceCache>> caches;
    std::vector<int64_t> next;  // each sequence's next position
    std::vector<float> logits;
    for (int b = 0; b < 3; ++b) {
      caches.push_back(device_cache(model, n));
      ASSERT_TRUE(caches.back());
      engine::ForwardBatch pre;
      pre.seqs.push_back({f.all_ids.data(), p - b, 0, caches.back().get(), false});
      ASSERT_TRUE(model.forward(pre, logits).is_ok());
      next.push_back(p - b);
    }
    int checked = 0;
    while (next[0] < n) {
      engine::ForwardBatch step;
      for (int b = 0; b < 3; ++b) step.seqs.push_back({f.all_ids.data() + next[b], 1, next[b], caches[b].get(), false});
      ASSERT_TRUE(model.forward(step, logits).is_ok());
      ASSERT_EQ(static_cast<int64_t>(logits.size()), 3 * f.vocab);
      for (int b = 0; b < 3; ++b) {
        EXPECT_LE(row_rel_err(logits.data() + b * f.vocab, alone.data() + next[b] * f.vocab, f.vocab), kSelfTolerance)
            << (eager ? "eager" : "graphs") << ", sequence " << b << " at position " << next[b];
        ++next[b];
        ++checked;
      }
    }
    EXPECT_GT(checked, 0);
  }
}

TEST_P(V4Cuda, HostCacheIsRejectedWithAClearError) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  expect_host_cache_rejected(*model, f);
}

TEST_P(V4Cuda, EngineSeededSamplingOnTheDeviceEqualsTheCpu) {
  const Fixture f = load_fixture(GetParam());
  expect_engine_sampling_same_on_cpu_and(f, "cuda");
}

TEST_P(V4Cuda, EngineGreedyWithPagingAndPreemptionMatchesTransformers) {
  const Fixture f = load_fixture(GetParam());
  expect_engine_greedy_with_preemption(f, "cpu");  // the same schedule on the CPU: engine bugs vs GPU ones
  expect_engine_greedy_with_preemption(f, "cuda");
}

TEST_P(V4Cuda, AutoDevicePicksCuda) {
  const Fixture f = load_fixture(GetParam());
  auto m = load_on(f.dir, "auto");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->info().device, "cuda");
}

TEST_P(V4Cuda, Bf16CheckpointStaysCloseToFp32OnTheSameWeights) {
  // The checkpoint rounded to bf16: the CPU runs it in fp32, the GPU with bf16 GEMM operands
  // (fp32 accumulation, fp32 activations between ops). Top-k choices (router, indexer) may flip
  // on near ties, so this reports the gap and bounds it loosely.
  const Fixture f = load_fixture(GetParam());
  auto make_dir = [&](const std::vector<RawTensor>& tensors) {
    return make_model_dir("bf16_" + GetParam(), GetParam(), tensors);
  };
  expect_bf16_gap_within(f, GetParam(), make_dir, 2, 0.1, static_cast<int>(f.all_ids.size() * 3 / 4));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V4Cuda, ::testing::ValuesIn(fixture_names()));

}  // namespace
}  // namespace di::test
