// DeepSeek-V4's shipped formats on the GPU: the quantized fixture (fp8 projections with ue8m0
// 128 x 128 blocks, fp4 experts re-encoded to fp8 at load; tools/fixtures/gen_quantized.py; its
// other tensors bf16, so the GPU runs bf16 activations) against the CPU model on the same files,
// which equals the dequantized checkpoint exactly (tests/model_quant). With bf16 activations the
// gap is bf16 rounding; with the fp8 activation scheme on (DeepSeek's, for steps of 4+ rows) it is
// reported and bounded looser (this fixture's widths are below what cuBLASLt's fp8 GEMM takes, so
// here both modes use the bf16 paths; tests/cuda/fp8_linear_test.cpp covers the fp8 GEMM). Greedy tokens are compared where the CPU's top two logits are
// apart by more than the gap could move them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "tests/cuda/cuda_suite.h"
#include "tests/cuda/device_model_util.h"
#include "tests/cuda/logits_gap.h"

namespace di::test {
namespace {

std::string quantized_v4() { return std::string(DI_FIXTURES_DIR) + "/model_quant/v4_fp8_fp4/quantized"; }

std::vector<int32_t> prompt(int64_t vocab) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 40; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return ids;
}

std::unique_ptr<engine::Model> load_cuda(bool fp8_activations) {
  engine::ModelOptions opts;
  opts.device = "cuda";
  opts.fp8_activations = fp8_activations;
  auto m = engine::load_model(quantized_v4(), opts);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : nullptr;
}

class V4QuantCuda : public CudaTest {};

TEST_F(V4QuantCuda, Fp8AndFp4WeightsMatchTheCpuModelAtBf16Level) {
  auto cpu = load_on(quantized_v4(), "cpu");
  ASSERT_TRUE(cpu);
  const int64_t vocab = cpu->info().vocab_size;
  const std::vector<int32_t> ids = prompt(vocab);
  const std::vector<float> ref = run_chunks(*cpu, ids, {static_cast<int32_t>(ids.size())});
  for (bool fp8_activations : {false, true}) {
    auto gpu = load_cuda(fp8_activations);
    ASSERT_TRUE(gpu);
    ASSERT_EQ(gpu->info().device, "cuda");
    // One prefill (the large-batch paths), then steps of 7, 1, 1, 3 tokens (the decode paths and
    // the grouped fp8 experts).
    for (const std::vector<int32_t>& chunks :
         {std::vector<int32_t>{static_cast<int32_t>(ids.size())}, std::vector<int32_t>{7, 1, 1, 3}}) {
      const std::vector<float> got = run_device_chunks(*gpu, ids, chunks);
      ASSERT_EQ(got.size(), ref.size());
      const LogitsGap g = logits_gap(got, ref, vocab);
      std::printf("v4 fp8+fp4 on cuda (%s activations, %zu chunk sizes) vs cpu: rel l2 %.3g, argmax %d/%d decided rows\n",
                  fp8_activations ? "fp8 for 4+ rows" : "bf16", chunks.size(), g.rel_l2, g.agree, g.decided);
      EXPECT_GT(g.rel_l2, 0.0);  // bf16 activations cannot be exact: zero means the CPU path ran
      EXPECT_LT(g.rel_l2, fp8_activations ? 0.15 : 0.05);
      EXPECT_EQ(g.agree, g.decided);
      EXPECT_GE(g.decided, static_cast<int>(ids.size() / 2));
    }
  }
}

}  // namespace
}  // namespace di::test
