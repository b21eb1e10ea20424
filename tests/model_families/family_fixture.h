// The model family tests' fixtures (tests/fixtures/model_<family>/<name>/, made with transformers)
// and scratch model directories made from them; the shared fixture machinery lives in
// tests/common/model_fixture.h.
#pragma once

#include <string>
#include <vector>

#include "tests/common/model_fixture.h"

namespace di::test {

inline const std::vector<FixtureId>& all_fixtures() {
  static const std::vector<FixtureId> kIds = {
      {"deepseek_v2", "deepseek_v2_lite_greedy"}, {"deepseek_v2", "deepseek_v2_grouped_yarn"},
      {"deepseek_v3", "deepseek_v3_qlora_yarn"},  {"llama", "llama3_gqa_tied"},
      {"qwen2", "qwen2_bias"},                    {"qwen3", "qwen3_qk_norm"},
  };
  return kIds;
}

// The dense families' fixtures (llama, qwen2, qwen3): one per family.
inline std::vector<FixtureId> dense_fixtures() {
  std::vector<FixtureId> out;
  for (const FixtureId& id : all_fixtures())
    if (id.family.rfind("deepseek", 0) != 0) out.push_back(id);
  return out;
}

inline std::vector<FixtureId> mla_fixtures() {
  std::vector<FixtureId> out;
  for (const FixtureId& id : all_fixtures())
    if (id.family.rfind("deepseek", 0) == 0) out.push_back(id);
  return out;
}

inline std::string make_model_dir(const std::string& scratch, const json& config, const std::vector<RawTensor>& tensors) {
  return make_model_dir_in("model_families", scratch, config, tensors);
}

}  // namespace di::test
