// LlamaModel: the dense GQA decoder (llama, qwen2, qwen3) behind the Model seam on the CPU in
// fp32. Declares one full-attention cache group holding each token's K and V per layer; all
// per-sequence state lives in the SequenceCache the engine provides.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/llama/llama_config.h"
#include "engine/model/llama/llama_weights.h"
#include "engine/model/model.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::llama {

class LlamaModel final : public Model {
 public:
  LlamaModel(LlamaConfig config, std::unique_ptr<LlamaWeights> weights, std::string model_dir);

  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;

  const LlamaConfig& config() const { return config_; }
  const RotaryEmbedding& rope() const { return rope_; }

 private:
  void forward_sequence(const SequenceInput& seq, float* logits) const;
  void attention(int32_t layer, const SequenceInput& seq, const float* h, float* out) const;
  void mlp(int32_t layer, const float* h, int64_t rows, float* out) const;

  LlamaConfig config_;
  std::unique_ptr<LlamaWeights> weights_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  RotaryEmbedding rope_;
};

// The registry's factory for model_type llama, qwen2 and qwen3 (registry.cpp).
Result<std::unique_ptr<Model>> create_llama_model(const std::string& model_dir, const nlohmann::json& config,
                                                  const ModelOptions& options);

}  // namespace di::engine::llama
