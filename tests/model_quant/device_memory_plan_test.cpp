// The weight plan in the dtype a CUDA model uploads (fp8 codes as stored, FP4 re-encoded to e4m3,
// scales as fp32, an fp32 checkpoint halved in a bf16 model), the load budget, and the error a
// model that does not fit gets: the bytes needed, the bytes free and the GPUs it would need.
#include <gtest/gtest.h>

#include <string>

#include "engine/model/memory_plan.h"
#include "engine/model/safetensors.h"

namespace di::test {
namespace {

std::string fixture(const std::string& rel) { return std::string(DI_FIXTURES_DIR) + "/" + rel; }

int64_t device_bytes(const engine::Checkpoint& ck, const std::string& name, bool bf16) {
  const engine::TensorView* t = ck.find(name);
  EXPECT_NE(t, nullptr) << name;
  return t ? engine::device_tensor_bytes(ck, *t, bf16) : -1;
}

TEST(DeviceMemoryPlan, QuantizedTensorsInTheirDeviceFormat) {
  auto ck = engine::Checkpoint::open(fixture("model_quant/v4_fp8_fp4/quantized"));
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  const engine::Checkpoint& c = **ck;
  EXPECT_EQ(device_bytes(c, "layers.0.attn.wkv.weight", true), 48 * 64);           // fp8 e4m3 [48, 64]
  EXPECT_EQ(device_bytes(c, "layers.0.attn.wkv.scale", true), 1 * 4);              // e8m0 [1, 1] -> fp32
  EXPECT_EQ(device_bytes(c, "layers.0.ffn.experts.0.w1.weight", true), 32 * 64);   // fp4 [32, 64] packed in [32, 32]
  EXPECT_EQ(device_bytes(c, "layers.0.ffn.experts.0.w1.scale", true), 32 * 64 / 128 * 4);  // 1 x 128 fp32
  EXPECT_EQ(device_bytes(c, "embed.weight", true), 256 * 64 * 2);                  // bf16
  EXPECT_EQ(device_bytes(c, "embed.weight", false), 256 * 64 * 4);                 // fp32 model
  EXPECT_EQ(device_bytes(c, "layers.0.attn.compressor.norm.weight", true), 48 * 4);  // vector -> fp32
  EXPECT_EQ(device_bytes(c, "layers.0.hc_attn_fn", true), 8 * 128 * 4);            // fp32 table stays
  EXPECT_EQ(device_bytes(c, "layers.0.ffn.gate.tid2eid", true), 256 * 2 * 4);      // int32 as stored

  const engine::MemoryPlan with = engine::plan_device_weight_memory(c, 3, true, true);
  const engine::MemoryPlan without = engine::plan_device_weight_memory(c, 3, false, true);
  int64_t mtp = -1;
  for (const auto& p : with.parts)
    if (p.name == "mtp.0") mtp = p.bytes;
  ASSERT_GT(mtp, 0);
  EXPECT_EQ(without.total_bytes, with.total_bytes - mtp);
  for (const auto& p : without.parts) EXPECT_NE(p.name, "mtp.0");
}

TEST(DeviceMemoryPlan, Fp32CheckpointHalvesItsMatricesInABf16Model) {
  auto ck = engine::Checkpoint::open(fixture("model_llama/llama3_gqa_tied"));
  ASSERT_TRUE(ck.is_ok()) << ck.status().message();
  int64_t stored = 0, matrices = 0;
  for (const std::string& name : (*ck)->names()) {
    const engine::TensorView* t = (*ck)->find(name);
    ASSERT_EQ(t->dtype, engine::DType::kF32) << name;
    stored += t->nbytes;
    if (t->shape.size() == 2) matrices += t->nbytes;
  }
  ASSERT_GT(matrices, 0);
  ASSERT_LT(matrices, stored);  // the norms stay fp32
  EXPECT_EQ(engine::plan_device_weight_memory(**ck, 3, false, false).total_bytes, stored);
  EXPECT_EQ(engine::plan_device_weight_memory(**ck, 3, false, true).total_bytes, stored - matrices / 2);
}

TEST(DeviceMemoryPlan, BudgetIsFreeWithinTheShareAndTheLimit) {
  // 100 total, 40 used by others: 0.9 leaves 50; 60 are free.
  EXPECT_EQ(engine::device_weight_budget(60, 100, 0.9, 0), 50);
  EXPECT_EQ(engine::device_weight_budget(60, 100, 1.0, 0), 60);
  EXPECT_EQ(engine::device_weight_budget(60, 100, 0.9, 30), 30);
  EXPECT_EQ(engine::device_weight_budget(60, 100, 0.9, 1000), 50);
  EXPECT_EQ(engine::device_weight_budget(60, 100, 0.3, 0), 0);  // others already use more than the share
}

TEST(DeviceMemoryPlan, NotFittingNamesNeededFreeAndGpus) {
  engine::MemoryPlan plan;
  plan.parts = {{"embed", 400}, {"layers.0", 300}, {"layers.1", 300}, {"head", 400}};
  plan.total_bytes = 1400;
  plan.largest_part_bytes = 400;
  EXPECT_TRUE(engine::check_device_fits(plan, 1500, 100).is_ok());
  EXPECT_TRUE(engine::check_device_fits(plan, 1400 + 100, 100).is_ok());

  // 600 free, 100 reserved: 500 a GPU, no two neighbours fit together -> 4 GPUs.
  const Status s = engine::check_device_fits(plan, 600, 100);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(s.message().find("needs 1500 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1400 of weights"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("only 600 bytes free"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("needs 4 GPUs"), std::string::npos) << s.message();

  // 800 free: 700 a GPU holds embed + layers.0 | layers.1 + head -> 2 GPUs.
  const Status two = engine::check_device_fits(plan, 800, 100);
  EXPECT_NE(two.message().find("needs 2 GPUs"), std::string::npos) << two.message();

  // A part larger than a whole GPU: no GPU count, the part named instead.
  const Status part = engine::check_device_fits(plan, 300, 100);
  ASSERT_FALSE(part.is_ok());
  EXPECT_NE(part.message().find("only 300 bytes free"), std::string::npos) << part.message();
  EXPECT_NE(part.message().find("'embed' needs 400"), std::string::npos) << part.message();
}

}  // namespace
}  // namespace di::test
