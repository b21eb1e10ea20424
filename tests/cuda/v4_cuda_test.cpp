// deepseek_v4 on the GPU against the CPU model and transformers' fp32 fixtures
// (tests/fixtures/model_v4): logits, a layer-by-layer comparison that names the first layer where
// the GPU leaves the CPU, batched decode graphs, and a bf16 copy of each checkpoint against the
// CPU fp32 run on the same rounded weights. The checks every CUDA model passes are in
// cuda_model_test.cpp.
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
  const json config = read_config(GetParam());
  auto first_layers_types = [](json& c, int k) {
    for (const char* key : {"layer_types", "mlp_layer_types"}) {
      json t = json::array();
      for (int l = 0; l < k; ++l) t.push_back(c[key][l]);
      c[key] = t;
    }
  };
  auto describe = [&](int k) {
    return " (last: " + config["layer_types"][k - 1].get<std::string>() + " / " +
           config["mlp_layer_types"][k - 1].get<std::string>() + ")";
  };
  expect_truncated_checkpoints_agree(v4_fixture(GetParam()), kVsCpu, first_layers_types, describe);
}

// Decode steps of several sequences replay CUDA graphs of a padded batch bucket (3 sequences run
// in the graph of 4, its last row padding); each row must equal the sequence run alone, with
// graphs and with enforce_eager.
TEST_P(V4Cuda, BatchedDecodeGraphsEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  const int64_t n = static_cast<int64_t>(f.all_ids.size());
  for (bool eager : {false, true}) {
    auto loaded = load_on_cuda(f.dir, eager);
    ASSERT_TRUE(loaded);
    engine::Model& model = *loaded;
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
