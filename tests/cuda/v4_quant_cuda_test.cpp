// DeepSeek-V4's shipped formats on the GPU: the quantized fixture (fp8 projections with ue8m0
// 128 x 128 blocks, fp4 experts re-encoded to fp8 at load; tools/fixtures/gen_quantized.py) run
// on CUDA equals the CPU model on the same files, which equals the dequantized checkpoint exactly
// (tests/model_quant): logits in one prefill and in chunks, and the greedy continuation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "tests/cuda/device_model_util.h"

namespace di::test {
namespace {

std::string quantized_v4() { return std::string(DI_FIXTURES_DIR) + "/model_quant/v4_fp8_fp4/quantized"; }

std::vector<int32_t> prompt(int64_t vocab) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 40; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return ids;
}

class V4QuantCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(V4QuantCuda, Fp8AndFp4WeightsMatchTheCpuModel) {
  auto gpu = load_on(quantized_v4(), "cuda");
  auto cpu = load_on(quantized_v4(), "cpu");
  ASSERT_TRUE(gpu && cpu);
  ASSERT_EQ(gpu->info().device, "cuda");
  const int64_t vocab = gpu->info().vocab_size;
  const std::vector<int32_t> ids = prompt(vocab);
  const std::vector<float> ref = run_chunks(*cpu, ids, {static_cast<int32_t>(ids.size())});
  const std::vector<float> got = run_device_chunks(*gpu, ids, {static_cast<int32_t>(ids.size())});
  ASSERT_EQ(got.size(), ref.size());
  const double err = worst_rel_err(got, ref, vocab);
  std::printf("v4 fp8+fp4 on cuda vs cpu: worst max|dlogit|/max|logit| %.3g over %zu rows\n", err, ids.size());
  EXPECT_LT(err, 1e-5);
  // Decode steps (one token each) take the same weights through the grouped experts.
  EXPECT_LT(worst_rel_err(run_device_chunks(*gpu, ids, {7, 1, 1, 3}), ref, vocab), 1e-5);
  for (size_t r = 0; r < ids.size(); ++r)
    EXPECT_EQ(argmax(got.data() + r * vocab, vocab), argmax(ref.data() + r * vocab, vocab)) << "row " << r;
}

TEST_F(V4QuantCuda, GreedyContinuationMatchesTheCpu) {
  const std::string dir = quantized_v4();
  auto cpu = load_on(dir, "cpu");
  ASSERT_TRUE(cpu);
  Fixture f;
  f.dir = dir;
  f.vocab = cpu->info().vocab_size;
  f.prompt = prompt(f.vocab);
  f.greedy.assign(16, 0);  // only its length is read: how many tokens to continue
  f.all_ids = f.prompt;
  f.all_ids.insert(f.all_ids.end(), f.greedy.begin(), f.greedy.end());
  const std::vector<int32_t> want = greedy_continuation(*cpu, f);
  ASSERT_EQ(want.size(), f.greedy.size());
  auto gpu = load_on(dir, "cuda");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(greedy_on_device(*gpu, f), want);
}

}  // namespace
}  // namespace di::test
