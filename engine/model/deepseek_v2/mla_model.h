// MlaModel: deepseek_v2 and deepseek_v3 (MLA attention + DeepSeekMoE) behind the Model seam on
// the CPU in fp32. Declares one full-attention cache group of latent entries (kv_lora_rank +
// qk_rope_head_dim floats per token per layer); all per-sequence state lives in the
// SequenceCache the engine provides.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/deepseek_v2/mla_attention.h"
#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/model.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v2 {

class MlaModel final : public Model {
 public:
  MlaModel(MlaConfig config, std::unique_ptr<MlaWeights> weights, std::string model_dir);

  const ModelInfo& info() const override { return info_; }
  const std::vector<CacheGroupSpec>& cache_groups() const override { return groups_; }
  Status forward(const ForwardBatch& batch, std::vector<float>& logits) override;

  const MlaConfig& config() const { return config_; }
  const RotaryEmbedding& rope() const { return rope_; }
  double softmax_scale() const { return config_.softmax_scale; }
  // kAuto (default) picks per chunk; tests pin one path to check each against the reference.
  void set_attention_path(MlaPath path) { path_ = path; }

 private:
  void forward_sequence(const SequenceInput& seq, float* logits) const;

  MlaConfig config_;
  std::unique_ptr<MlaWeights> weights_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  RotaryEmbedding rope_;
  MlaPath path_ = MlaPath::kAuto;
};

// The registry's factory for model_type deepseek_v2 and deepseek_v3 (registry.cpp).
Result<std::unique_ptr<Model>> create_mla_model(const std::string& model_dir, const nlohmann::json& config,
                                                const ModelOptions& options);

}  // namespace di::engine::deepseek_v2
