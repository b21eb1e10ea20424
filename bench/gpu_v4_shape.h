// The DeepSeek-V4-Flash-width shape the V4 GPU benchmarks run with random weights
// (transformers' DeepseekV4Config defaults: hidden 4096, 64 heads x 512, q_lora 1024, 8 output
// groups of rank 1024, window 128, indexer 64 x 128 top-512, hc_mult 4, 256 routed experts of
// width 2048, top-6 + 1 shared, vocab 129,280) cut to three layers: sliding + hash-routed MoE,
// CSA, HCA.
#pragma once

#include "engine/model/deepseek_v4/config.h"

namespace di::bench {

inline engine::deepseek_v4::DeepseekV4Config flash_width_slice() {
  using engine::deepseek_v4::AttnType;
  using engine::deepseek_v4::MlpType;
  engine::deepseek_v4::DeepseekV4Config c;
  c.vocab_size = 129280;
  c.hidden_size = 4096;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 64;
  c.head_dim = 512;
  c.qk_rope_head_dim = 64;
  c.q_lora_rank = 1024;
  c.o_groups = 8;
  c.o_lora_rank = 1024;
  c.moe_intermediate_size = 2048;
  c.n_routed_experts = 256;
  c.num_experts_per_tok = 6;
  c.sliding_window = 128;
  c.hc_mult = 4;
  c.index_n_heads = 64;
  c.index_head_dim = 128;
  c.index_topk = 512;
  c.max_position_embeddings = 1 << 20;
  c.layer_types = {AttnType::kSliding, AttnType::kCSA, AttnType::kHCA};
  c.mlp_layer_types = {MlpType::kHashMoe, MlpType::kMoe, MlpType::kMoe};
  c.rope_main = {.rope_type = "default", .rope_theta = 10000.0, .dim = 64};
  c.rope_compress = {.rope_type = "yarn", .rope_theta = 160000.0, .dim = 64, .factor = 16.0,
                     .original_max_position_embeddings = 65536, .beta_fast = 32.0, .beta_slow = 1.0};
  return c;
}


}  // namespace di::bench
