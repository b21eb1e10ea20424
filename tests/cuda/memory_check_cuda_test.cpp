// The load-time memory check of the CUDA models: with gpu_memory_limit_bytes too small for the
// weights the load fails before any allocation with kOutOfMemory naming the bytes needed, the
// bytes free and the GPUs it would need; without it the same fixture loads; and a limit just
// above the weights leaves the KV cache only what remains. One fixture per CUDA family: llama,
// deepseek_v4 (fp8 + fp4 experts, MTP), deepseek_v3 (MLA).
#include <gtest/gtest.h>

#include <string>

#include "engine/model/memory_plan.h"
#include "engine/model/model.h"
#include "engine/model/safetensors.h"
#include "kernels/cuda/device.h"
#include "tests/cuda/cuda_suite.h"

namespace di::test {
namespace {

std::string fixture(const std::string& rel) { return std::string(DI_FIXTURES_DIR) + "/" + rel; }

Result<std::unique_ptr<engine::Model>> load_cuda(const std::string& dir, int64_t limit) {
  engine::ModelOptions opts;
  opts.device = "cuda";
  opts.gpu_memory_limit_bytes = limit;
  return engine::load_model(dir, opts);
}

class CudaMemoryCheck : public CudaTestWithParam<std::string> {};

TEST_P(CudaMemoryCheck, TinyLimitIsAClearErrorAndNoLimitLoads) {
  const std::string dir = fixture(GetParam());
  constexpr int64_t kLimit = int64_t{1} << 20;
  auto small = load_cuda(dir, kLimit);
  ASSERT_FALSE(small.is_ok());
  EXPECT_EQ(small.status().code(), StatusCode::kOutOfMemory) << small.status().message();
  const std::string& msg = small.status().message();
  EXPECT_NE(msg.find("the model needs "), std::string::npos) << msg;
  EXPECT_NE(msg.find("only " + std::to_string(kLimit) + " bytes free"), std::string::npos) << msg;
  // The workspace reserve alone is over 1 MiB, so no GPU of this size holds even one part: the
  // message names the part instead of a GPU count.
  EXPECT_NE(msg.find("weights part '"), std::string::npos) << msg;

  auto full = load_cuda(dir, 0);
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  EXPECT_EQ((*full)->info().device, "cuda");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaMemoryCheck,
                         ::testing::Values("model_llama/llama3_gqa_tied", "model_quant/v4_fp8_fp4/quantized",
                                           "model_deepseek_v3/deepseek_v3_qlora_yarn"),
                         [](const auto& info) { return std::to_string(info.index); });

TEST(CudaMemoryCheckCache, LimitJustAboveTheWeightsLeavesTheCacheTheRest) {
  if (kernels::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string dir = fixture("model_llama/llama3_gqa_tied");
  auto ck = engine::Checkpoint::open(dir);
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  // The fixture is fp32, so the model uploads fp32; 3 layers, no MTP.
  const int64_t weights = engine::plan_device_weight_memory(**ck, 3, false, false).total_bytes;
  constexpr int64_t kReserve = int64_t{3} << 30;  // the llama model's activation reserve
  constexpr int64_t kRoom = int64_t{64} << 20;

  // Weights fit but not the reserve on top: the error names the weights' bytes.
  auto tight = load_cuda(dir, weights + kReserve - 1);
  ASSERT_FALSE(tight.is_ok());
  EXPECT_EQ(tight.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(tight.status().message().find(std::to_string(weights) + " of weights"), std::string::npos)
      << tight.status().message();

  auto m = load_cuda(dir, weights + kReserve + kRoom);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  engine::CacheMemory* mem = (*m)->cache_memory();
  ASSERT_NE(mem, nullptr);
  const int64_t budget = mem->budget_bytes();
  EXPECT_GT(budget, 0);
  EXPECT_LE(budget, kRoom);
}

}  // namespace
}  // namespace di::test
