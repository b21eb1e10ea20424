// What the V4 demo model's MTP tests share on the CPU and the GPU: the committed checkpoint, its
// fixtures' prompts, and the engine settings and greedy runs they compare. Header-only.
#pragma once

#include <string>
#include <vector>

#include "tests/common/model_fixture.h"
#include "tests/common/spec_run.h"

namespace di::test::v4_demo {

inline const std::string kDemoDir = std::string(DI_SOURCE_DIR) + "/models/deepseek-v4-demo";
constexpr int64_t kNewTokens = 40;

// The demo fixtures' prompts: 12, 11, 5 and 201 tokens.
inline std::vector<std::vector<int32_t>> demo_prompts() {
  std::vector<std::vector<int32_t>> out;
  for (const char* name : {"demo_bible", "demo_chat", "demo_wordnet", "demo_long"})
    out.push_back(load_fixture({"v4_demo", name}).prompt);
  return out;
}

// max_model_len 512, 96 tokens a step, `drafts` draft tokens, variable length or not.
inline engine::EngineConfig base_config(int32_t drafts, int32_t variable) {
  return spec_config(drafts, variable, 512, 96);
}

inline engine::SamplingParams greedy_params() { return spec_greedy(kNewTokens); }

// The same tokens, kNewTokens of them, for every prompt.
inline void expect_same_tokens(const SpecRun& want, const SpecRun& got, const std::string& label) {
  di::test::expect_same_tokens(want, got, label, kNewTokens);
}

}  // namespace di::test::v4_demo
