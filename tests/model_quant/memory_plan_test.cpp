// The weight memory plan over real checkpoints (the quantized fixtures, both naming styles):
// parts sum to the stored bytes, MTP counts only when on, and the GPU count and errors follow
// from the parts.
#include <gtest/gtest.h>

#include <string>

#include "engine/model/memory_plan.h"
#include "engine/model/safetensors.h"

namespace di::test {
namespace {

std::string fixture(const std::string& model, const std::string& kind) {
  return std::string(DI_FIXTURES_DIR) + "/model_quant/" + model + "/" + kind;
}

int64_t stored_bytes(const engine::Checkpoint& ck) {
  int64_t n = 0;
  for (const std::string& name : ck.names()) n += ck.find(name)->nbytes;
  return n;
}

const engine::WeightPart* part(const engine::MemoryPlan& p, const std::string& name) {
  for (const auto& w : p.parts)
    if (w.name == name) return &w;
  return nullptr;
}

TEST(MemoryPlan, PartsCoverEveryStoredByteInBothNamingStyles) {
  for (const auto& [model, layers] : {std::pair<std::string, int32_t>{"v4_fp8_fp4", 3}, {"v3_fp8", 3}}) {
    auto ck = engine::Checkpoint::open(fixture(model, "quantized"));
    ASSERT_TRUE(ck.is_ok()) << ck.status().message();
    const engine::MemoryPlan with = engine::plan_weight_memory(**ck, layers, true);
    const engine::MemoryPlan without = engine::plan_weight_memory(**ck, layers, false);
    EXPECT_EQ(with.total_bytes, stored_bytes(**ck)) << model;
    ASSERT_NE(part(with, "mtp.0"), nullptr) << model;
    EXPECT_GT(part(with, "mtp.0")->bytes, 0);
    EXPECT_EQ(part(without, "mtp.0"), nullptr);
    EXPECT_EQ(without.total_bytes, with.total_bytes - part(with, "mtp.0")->bytes);
    for (int32_t l = 0; l < layers; ++l) {
      ASSERT_NE(part(with, "layers." + std::to_string(l)), nullptr) << model << " layer " << l;
      EXPECT_GT(part(with, "layers." + std::to_string(l))->bytes, 0);
    }
    EXPECT_GT(part(with, "embed")->bytes, 0) << model;
    EXPECT_GT(part(with, "head")->bytes, 0) << model;
    // The dequantized fp32 twin takes more than the fp8 / fp4 checkpoint.
    auto dq = engine::Checkpoint::open(fixture(model, "dequantized"));
    ASSERT_TRUE(dq.is_ok());
    EXPECT_GT(engine::plan_weight_memory(**dq, layers, false).total_bytes, 2 * without.total_bytes) << model;
  }
}

TEST(MemoryPlan, GpusNeededPacksPartsInOrderAndNamesTheNumbers) {
  engine::MemoryPlan p;
  for (int64_t b : {10, 40, 40, 40, 10}) {
    p.parts.push_back({"layers." + std::to_string(p.parts.size()), b});
    p.total_bytes += b;
  }
  EXPECT_EQ(*engine::gpus_needed(p, 140, 0), 1);
  EXPECT_EQ(*engine::gpus_needed(p, 100, 0), 2);  // 10+40+40 | 40+10
  EXPECT_EQ(*engine::gpus_needed(p, 100, 20), 3);  // 80 usable: 10+40 | 40+40 | 10
  EXPECT_TRUE(engine::check_fits(p, 100, 0, 2).is_ok());
  const Status st = engine::check_fits(p, 100, 0, 1);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("need 140 bytes"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("100 bytes free"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("needs 2 GPUs"), std::string::npos) << st.message();
  const auto too_big = engine::gpus_needed(p, 30, 0);
  ASSERT_FALSE(too_big.is_ok());
  EXPECT_NE(too_big.status().message().find("'layers.1' needs 40 bytes"), std::string::npos) << too_big.status().message();
}

}  // namespace
}  // namespace di::test
