// MlaModel: deepseek_v2 and deepseek_v3 (MLA attention + DeepSeekMoE) behind the Model seam on
// the CPU in fp32. Declares one full-attention cache group of latent entries (kv_lora_rank +
// qk_rope_head_dim floats per token per layer, the MTP layers' rows after the decoder's); all
// per-sequence state lives in the SequenceCache the engine provides. Drafts with DeepSeek-V3's
// MTP layer (mla_mtp.cpp) for speculative decoding.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
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
  Status drafts_supported() const override;
  // Drafts with MTP layer 0, chained on its own output for draft tokens past the first (one MTP
  // layer reused, as DeepSeek-V3 serves it).
  Status propose_drafts(std::span<const DraftInput> inputs, DraftChooser& chooser) override;

  // MTP layer k over positions seq.start_pos.. of a sequence the main model has run: seq.tokens[i]
  // is the token after position i, prev_hidden [num_tokens, hidden] the hidden row at each
  // position (main_hidden_for_mtp() of the main model's, or an earlier draft step's output).
  // Writes logits rows predicting the token after next (all rows with seq.all_logits, else the
  // last) and, when given, the block's output rows after shared_head.norm (the next draft step's
  // prev_hidden). Its
  // latent rows are layer num_hidden_layers + k of the cache group. Errors: no such MTP layer
  // (the message says why MTP is unavailable), a token outside the vocabulary.
  Status mtp_forward(int32_t k, const SequenceInput& seq, const float* prev_hidden, float* logits,
                     std::vector<float>* out_hidden) const;
  // The main model's last-layer outputs [rows, hidden] as the MTP layer reads them: after the
  // final norm (what vLLM and SGLang hand DeepSeek-V3's MTP layer).
  std::vector<float> main_hidden_for_mtp(const float* final_hidden, int64_t rows) const;
  // One sequence's forward (as forward() runs it) keeping the last layer's outputs.
  Status forward_hidden(const SequenceInput& seq, float* logits, std::vector<float>* final_hidden) const;
  int32_t num_mtp_layers() const { return static_cast<int32_t>(weights_->mtp_layers.size()); }
  const MlaWeights& weights() const { return *weights_; }

  const MlaConfig& config() const { return config_; }
  const RotaryEmbedding& rope() const { return rope_; }
  double softmax_scale() const { return config_.softmax_scale; }
  // kAuto (default) picks per chunk; tests pin one path to check each against the reference.
  void set_attention_path(MlaPath path) { path_ = path; }

 private:
  void forward_sequence(const SequenceInput& seq, float* logits, std::vector<float>* final_hidden = nullptr) const;

  MlaConfig config_;
  std::unique_ptr<MlaWeights> weights_;
  ModelInfo info_;
  std::vector<CacheGroupSpec> groups_;
  RotaryEmbedding rope_;
  MlaPath path_ = MlaPath::kAuto;
  // The last-layer outputs of the last forward()'s keep_hidden sequences, by batch index.
  std::vector<std::vector<float>> hidden_;
};

// The registry's factory for model_type deepseek_v2 and deepseek_v3 (registry.cpp).
Result<std::unique_ptr<Model>> create_mla_model(const std::string& model_dir, const nlohmann::json& config,
                                                const ModelOptions& options);

}  // namespace di::engine::deepseek_v2
