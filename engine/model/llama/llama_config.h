// LlamaConfig: the dense decoder families that share Llama's layer (llama, qwen2, qwen3), read
// from config.json with each model_type's defaults and quirks (qwen2's fixed q/k/v bias, qwen3's
// per-head q/k norms). Parsing and checks only; no weights, no math.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::llama {

struct LlamaConfig {
  std::string model_type;  // "llama", "qwen2" or "qwen3"
  int64_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_hidden_layers = 0;
  int32_t num_attention_heads = 0;
  int32_t num_key_value_heads = 0;
  int32_t head_dim = 0;
  double rms_norm_eps = 1e-6;
  int64_t max_position_embeddings = 0;
  bool qkv_bias = false;   // q_proj, k_proj, v_proj carry a bias
  bool o_bias = false;     // o_proj carries a bias
  bool mlp_bias = false;   // gate/up/down carry biases (llama's mlp_bias)
  bool qk_norm = false;    // qwen3: RMSNorm over each head's q and k before rope
  bool tie_word_embeddings = false;
  RopeConfig rope;
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;
};

// Reads config.json for one of the dense families; every error names the field.
Result<LlamaConfig> parse_llama_config(const nlohmann::json& config);

}  // namespace di::engine::llama
