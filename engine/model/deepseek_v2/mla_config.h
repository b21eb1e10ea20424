// MlaConfig: deepseek_v2 and deepseek_v3 (multi-head latent attention + DeepSeekMoE) read from
// config.json with transformers 5.17's defaults for each model_type. Parsing and checks only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/model/quant_config.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v2 {

// How a MoE layer picks its experts.
enum class Routing {
  kSoftmaxGreedy,        // V2: softmax scores, plain top-k
  kSoftmaxGroupLimited,  // V2: softmax, top-k among the topk_group groups with the best max
  kSigmoidNoAux,         // V3: sigmoid + e_score_correction_bias, groups ranked by their top-2 sum
};

struct MlaConfig {
  std::string model_type;  // "deepseek_v2" or "deepseek_v3"
  QuantConfig quant;       // quantization_config (DeepSeek-V3/R1 ship fp8 with fp32 block scales)
  int64_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;      // dense layers (the first first_k_dense_replace)
  int32_t moe_intermediate_size = 0;  // each routed expert; shared experts use n_shared times it
  int32_t num_hidden_layers = 0;
  int32_t num_attention_heads = 0;
  int32_t q_lora_rank = 0;  // 0: q_proj straight from the hidden state (V2-Lite)
  int32_t kv_lora_rank = 0;
  int32_t qk_nope_head_dim = 0;
  int32_t qk_rope_head_dim = 0;
  int32_t v_head_dim = 0;
  int32_t n_routed_experts = 0;
  int32_t n_shared_experts = 0;
  int32_t num_experts_per_tok = 0;
  int32_t n_group = 1;
  int32_t topk_group = 1;
  int32_t first_k_dense_replace = 0;
  Routing routing = Routing::kSoftmaxGreedy;
  bool norm_topk_prob = false;
  double routed_scaling_factor = 1.0;
  bool attention_bias = false;  // q_a_proj, kv_a_proj_with_mqa and o_proj biases
  bool mlp_bias = false;        // deepseek_v2's dense / shared / expert MLP biases
  bool rope_interleave = true;  // V3 may pair rope channels as (i, i + d/2) instead
  bool tie_word_embeddings = false;
  int32_t num_nextn_predict_layers = 0;  // MTP layers stored after the decoder layers
  double rms_norm_eps = 1e-6;
  int64_t max_position_embeddings = 0;
  RopeConfig rope;
  double softmax_scale = 0;  // qk_head_dim^-0.5, times mscale^2 under YaRN with mscale_all_dim
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;

  int32_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool is_moe_layer(int32_t layer) const { return n_routed_experts > 0 && layer >= first_k_dense_replace; }
};

// Reads config.json for deepseek_v2 / deepseek_v3; every error names the field.
Result<MlaConfig> parse_mla_config(const nlohmann::json& config);

}  // namespace di::engine::deepseek_v2
