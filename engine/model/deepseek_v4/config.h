// DeepseekV4Config: config.json of a deepseek_v4 model, with the legacy keys transformers folds
// in (compress_ratios, compress_rate_csa/hca, num_hash_layers, qk_rope_head_dim, a flat or
// rope_scaling rope layout). Parsing only: no weights, no math.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/model/quant_config.h"

namespace di::engine::deepseek_v4 {

enum class AttnType { kSliding, kCSA, kHCA };  // sliding_attention, compressed_sparse_, heavily_
enum class MlpType { kHashMoe, kMoe };
enum class ScoringFunc { kSqrtSoftplus, kSigmoid, kSoftmax };

// One rope ("main" for sliding layers, "compress" for CSA/HCA layers and their compressors).
struct RopeConfig {
  std::string rope_type = "default";  // "default" or "yarn"
  double rope_theta = 10000.0;
  int32_t dim = 0;  // rotated channels at the end of each head: int(head_dim * partial factor)
  // yarn
  double factor = 1.0;
  double original_max_position_embeddings = 0;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double attention_factor = 1.0;  // multiplies cos and sin
};

struct DeepseekV4Config {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int32_t num_hidden_layers = 0;
  int32_t num_attention_heads = 0;
  int32_t head_dim = 0;
  int32_t qk_rope_head_dim = 0;
  int32_t q_lora_rank = 0;
  int32_t o_groups = 0;
  int32_t o_lora_rank = 0;
  int32_t moe_intermediate_size = 0;
  int32_t n_routed_experts = 0;
  int32_t num_experts_per_tok = 0;
  int32_t n_shared_experts = 1;
  int32_t sliding_window = 0;
  int32_t hc_mult = 0;
  int32_t hc_sinkhorn_iters = 20;
  int32_t index_n_heads = 0;
  int32_t index_head_dim = 0;
  int32_t index_topk = 0;
  int32_t num_nextn_predict_layers = 0;
  int32_t compress_rate_csa = 4;
  int32_t compress_rate_hca = 128;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double hc_eps = 1e-6;
  double swiglu_limit = 10.0;
  double routed_scaling_factor = 1.5;
  ScoringFunc scoring_func = ScoringFunc::kSqrtSoftplus;
  bool tie_word_embeddings = false;
  std::vector<AttnType> layer_types;
  std::vector<MlpType> mlp_layer_types;
  RopeConfig rope_main;
  RopeConfig rope_compress;
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;
  QuantConfig quant;  // quantization_config + expert_dtype (DeepSeek's shipped checkpoints)

  int32_t compress_rate(AttnType t) const {
    return t == AttnType::kCSA ? compress_rate_csa : t == AttnType::kHCA ? compress_rate_hca : 0;
  }
};

Result<DeepseekV4Config> parse_config(const nlohmann::json& config);

}  // namespace di::engine::deepseek_v4
