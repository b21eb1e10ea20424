// The random Llama the GPU tests build without a checkpoint: head_dim 64, so its bf16 runs take
// the tensor-core prefill and split-KV decode kernels (the same weights in fp32 take the general
// kernel), and 4096 positions for prompts past one 256-key attention chunk.
#pragma once

#include "engine/model/llama/llama_config.h"

namespace di::test {

inline engine::llama::LlamaConfig random_llama_config() {
  engine::llama::LlamaConfig c;
  c.model_type = "llama";
  c.vocab_size = 1000;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 2;
  c.head_dim = 64;
  c.max_position_embeddings = 4096;
  c.rope.dim = 64;
  c.rope.rope_theta = 10000.0;
  return c;
}

}  // namespace di::test
