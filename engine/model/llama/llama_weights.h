// LlamaWeights: every tensor of a llama / qwen2 / qwen3 checkpoint as fp32 pointers, by
// transformers' names (model.layers.N.self_attn.q_proj.weight, ...). Loading only, no math.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/llama/llama_config.h"
#include "engine/model/weight_loader.h"

namespace di::engine::llama {

struct LlamaLayerWeights {
  const float* input_layernorm = nullptr;           // [hidden]
  const float* post_attention_layernorm = nullptr;  // [hidden]
  const float* q_proj = nullptr;  // [heads * head_dim, hidden]
  const float* k_proj = nullptr;  // [kv_heads * head_dim, hidden]
  const float* v_proj = nullptr;  // [kv_heads * head_dim, hidden]
  const float* o_proj = nullptr;  // [hidden, heads * head_dim]
  const float* q_bias = nullptr;  // biases: null when the config has none
  const float* k_bias = nullptr;
  const float* v_bias = nullptr;
  const float* o_bias = nullptr;
  const float* q_norm = nullptr;  // qwen3: [head_dim]
  const float* k_norm = nullptr;
  const float* gate_proj = nullptr;  // [intermediate, hidden]
  const float* up_proj = nullptr;    // [intermediate, hidden]
  const float* down_proj = nullptr;  // [hidden, intermediate]
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;
};

struct LlamaWeights {
  WeightStore store;
  const float* embed = nullptr;    // [vocab, hidden]
  const float* lm_head = nullptr;  // [vocab, hidden]; the embedding when tied
  const float* norm = nullptr;     // [hidden]
  std::vector<LlamaLayerWeights> layers;
};

// Maps model_dir's safetensors and takes every tensor `config` implies; a missing, extra or
// mis-shaped tensor is an error naming it.
Result<std::unique_ptr<LlamaWeights>> load_llama_weights(const std::string& model_dir,
                                                         const LlamaConfig& config);

}  // namespace di::engine::llama
