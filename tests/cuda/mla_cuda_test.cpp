// deepseek_v2 / deepseek_v3 on the GPU against the CPU MLA model and transformers' fp32 fixtures
// (tests/fixtures/model_deepseek_v2, model_deepseek_v3): logits, a layer-by-layer comparison that
// names the first layer where the GPU leaves the CPU, mixed steps and decode graphs, experts
// grouped on the host, and a bf16 copy of each checkpoint. The checks every CUDA model passes are
// in cuda_model_test.cpp.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/cuda/device.h"
#include "tests/common/model_checks.h"
#include "tests/cuda/bf16_checkpoint.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/cuda_vs_cpu.h"
#include "tests/cuda/device_model_util.h"
#include "tests/model_families/family_fixture.h"

namespace di::test {
namespace {

constexpr double kTolerance = 1e-4;  // max|Δlogit| / max|logit| per row

class MlaCuda : public CudaTestWithParam<FixtureId> {};

TEST_P(MlaCuda, FullSequenceLogitsMatchCpuAndTransformers) {
  expect_cuda_matches_cpu_and_transformers(load_fixture(GetParam()), GetParam().name, kTolerance, kTolerance);
}

// Truncated copies of the checkpoint (the first k layers) on both devices: the first k whose
// logits differ names the layer (dense or MoE) to look at.
TEST_P(MlaCuda, LayerByLayerAgreesWithCpu) {
  auto no_mtp = [](json& c, int) {
    if (c.contains("num_nextn_predict_layers")) c["num_nextn_predict_layers"] = 0;  // their tensors are dropped
  };
  expect_truncated_checkpoints_agree(GetParam(), kTolerance, no_mtp, [](int) { return std::string(); });
}

// Steps that mix a prefill chunk with decode tokens of other sequences, then decode steps of 3
// and 4 sequences that replay the CUDA graph of batch bucket 4 (with and without a padding row):
// every row equals the sequence run alone, with graphs and with enforce_eager, and the two modes
// agree with each other.
TEST_P(MlaCuda, MixedStepsAndDecodeGraphsEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  const int64_t n = static_cast<int64_t>(f.all_ids.size());
  const int32_t p = static_cast<int32_t>(f.prompt.size());
  ASSERT_GE(p, 4);
  ASSERT_GT(n, p + 1);
  std::vector<std::vector<float>> seen(2);  // every checked row, graphs then eager
  for (bool eager : {false, true}) {
    auto loaded = load_on_cuda(f.dir, eager);
    ASSERT_TRUE(loaded);
    engine::Model& model = *loaded;
    const std::vector<float> alone = run_device_chunks(model, f.all_ids, {static_cast<int32_t>(n)});
    const char* mode = eager ? "eager" : "graphs";
    std::vector<std::unique_ptr<engine::SequenceCache>> caches;
    std::vector<int64_t> next;  // each sequence's next position
    std::vector<float> logits;
    auto check_row = [&](const float* row, int64_t pos, const std::string& what) {
      EXPECT_LE(row_rel_err(row, alone.data() + pos * f.vocab, f.vocab), kTolerance)
          << mode << ", " << what << " at position " << pos;
      seen[eager].insert(seen[eager].end(), row, row + f.vocab);
    };
    for (int b = 0; b < 4; ++b) {
      caches.push_back(device_cache(model, n));
      ASSERT_TRUE(caches.back());
    }
    for (int b = 0; b < 3; ++b) {
      engine::ForwardBatch pre;
      pre.seqs.push_back({f.all_ids.data(), p - b, 0, caches[b].get(), false});
      ASSERT_TRUE(model.forward(pre, logits).is_ok());
      next.push_back(p - b);
    }
    {  // one step: sequence 3's first chunk (every row's logits) between three decode tokens
      engine::ForwardBatch mixed;
      mixed.seqs.push_back({f.all_ids.data() + next[0], 1, next[0], caches[0].get(), false});
      mixed.seqs.push_back({f.all_ids.data() + next[1], 1, next[1], caches[1].get(), false});
      mixed.seqs.push_back({f.all_ids.data(), p - 1, 0, caches[3].get(), true});
      mixed.seqs.push_back({f.all_ids.data() + next[2], 1, next[2], caches[2].get(), false});
      const auto st = model.forward(mixed, logits);
      ASSERT_TRUE(st.is_ok()) << st.message();
      ASSERT_EQ(static_cast<int64_t>(logits.size()), (3 + p - 1) * f.vocab);
      check_row(logits.data(), next[0], "decode 0 in the mixed step");
      check_row(logits.data() + f.vocab, next[1], "decode 1 in the mixed step");
      for (int32_t r = 0; r < p - 1; ++r) check_row(logits.data() + (2 + r) * f.vocab, r, "the mixed step's chunk");
      check_row(logits.data() + (1 + p) * f.vocab, next[2], "decode 2 in the mixed step");
      for (int b = 0; b < 3; ++b) ++next[b];
      next.push_back(p - 1);
    }
    for (int s = 0; next[0] < n; ++s) {
      const int count = s % 2 ? 4 : 3;  // 3 sequences run in bucket 4 with a padding row
      engine::ForwardBatch step;
      for (int b = 0; b < count; ++b)
        if (next[b] < n) step.seqs.push_back({f.all_ids.data() + next[b], 1, next[b], caches[b].get(), false});
      ASSERT_TRUE(model.forward(step, logits).is_ok());
      ASSERT_EQ(static_cast<int64_t>(logits.size()), static_cast<int64_t>(step.seqs.size()) * f.vocab);
      for (size_t i = 0; i < step.seqs.size(); ++i) {
        const int64_t pos = step.seqs[i].start_pos;
        check_row(logits.data() + i * f.vocab, pos, "decode step " + std::to_string(s));
      }
      for (int b = 0; b < count; ++b) next[b] = std::min<int64_t>(n, next[b] + 1);
    }
  }
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (size_t r = 0; r * f.vocab < seen[0].size(); ++r)
    EXPECT_LE(row_rel_err(seen[0].data() + r * f.vocab, seen[1].data() + r * f.vocab, f.vocab), kTolerance)
        << "graphs vs eager, checked row " << r;
}

// A step of so many rows that its (row, expert) pairs exceed what is grouped on the device: the
// experts are grouped on the host instead (one cuBLAS GEMM per expert). Dozens of prompts of
// different lengths prefilled together: each one's last row equals the prompt run alone.
TEST_P(MlaCuda, LargeStepsGroupExpertsOnTheHostAndEqualEachAlone) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_on(f.dir, "cuda");
  ASSERT_TRUE(model);
  const int32_t n = static_cast<int32_t>(f.all_ids.size());
  const int64_t K = read_config(GetParam())["num_experts_per_tok"].get<int64_t>();
  const std::vector<float> alone = run_device_chunks(*model, f.all_ids, {n});
  std::vector<std::unique_ptr<engine::SequenceCache>> caches;
  engine::ForwardBatch big;
  std::vector<int32_t> lengths;
  int64_t rows = 0;
  for (int32_t b = 0; rows * K <= 6000; ++b) {
    const int32_t len = n - b % std::max(1, n / 2);
    caches.push_back(device_cache(*model, n));
    ASSERT_TRUE(caches.back());
    big.seqs.push_back({f.all_ids.data(), len, 0, caches.back().get(), false});
    lengths.push_back(len);
    rows += len;
  }
  std::vector<float> logits;
  const Status st = model->forward(big, logits);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_EQ(logits.size(), lengths.size() * f.vocab);
  for (size_t b = 0; b < lengths.size(); ++b)
    EXPECT_LE(row_rel_err(logits.data() + b * f.vocab, alone.data() + (lengths[b] - 1) * f.vocab, f.vocab), kTolerance)
        << "sequence " << b << " of " << lengths.size() << " (" << lengths[b] << " tokens, " << rows << " rows)";
}

TEST_P(MlaCuda, Bf16CheckpointStaysCloseToFp32OnTheSameWeights) {
  // The checkpoint rounded to bf16: the CPU runs it in fp32, the GPU with bf16 GEMM operands
  // (fp32 accumulation, fp32 activations and latent cache). Router choices may flip on near ties,
  // so this reports the gap and bounds it loosely.
  const Fixture f = load_fixture(GetParam());
  auto make_dir = [&](const std::vector<RawTensor>& tensors) {
    return make_model_dir("mla_bf16_" + GetParam().name, read_config(GetParam()), tensors);
  };
  expect_bf16_gap_within(f, GetParam().name, make_dir, 2, 0.1, static_cast<int>(f.all_ids.size() * 3 / 4));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MlaCuda, ::testing::ValuesIn(mla_fixtures()));

}  // namespace
}  // namespace di::test
