// DeepseekV4Model: the deepseek_v4 family behind the Model seam on the CPU (fp32). Declares its
// cache groups, loads config + weights, and runs the layers over each sequence's new tokens;
// all per-sequence state lives in the SequenceCache the engine provides.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/deepseek_v4/attention.h"
#include "engine/model/deepseek_v4/chunk.h"
#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"
#include "engine/model/model.h"

namespace di::engine::deepseek_v4 {

class DeepseekV4Model final : public Model {
 public:
  DeepseekV4Model(DeepseekV4Config config, std::unique_ptr<DeepseekV4Weights> weights,
                  std::string model_dir);

  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;

  const DeepseekV4Config& config() const { return config_; }
  const DeepseekV4Weights& weights() const { return *weights_; }
  const Ropes& ropes() const { return ropes_; }

 private:
  // Runs one sequence's chunk; writes `rows` logits rows (the last or all tokens) at `logits`.
  void forward_sequence(const Chunk& chunk, bool all_logits, float* logits) const;

  DeepseekV4Config config_;
  std::unique_ptr<DeepseekV4Weights> weights_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  CacheLayout layout_;
  Ropes ropes_;
};

// The cache groups a deepseek_v4 model declares (fp32 entries), and where each lives in
// `layout`; shared by the CPU and CUDA models so both read the same cache.
std::vector<CacheGroupSpec> make_cache_groups(const DeepseekV4Config& c, CacheLayout* layout);

// The registry's factory (registry.cpp): the CUDA model when options.device is "cuda".
Result<std::unique_ptr<Model>> create_model(const std::string& model_dir,
                                            const nlohmann::json& config,
                                            const ModelOptions& options);

}  // namespace di::engine::deepseek_v4
