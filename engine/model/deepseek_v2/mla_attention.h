// Multi-head latent attention (DeepSeek-V2 paper §2.1) over a sequence's cached latents. Each
// token caches only its normalised kv latent (kv_lora_rank) and its rotated shared rope key
// (qk_rope_head_dim). Two exact ways to attend: the plain path expands every cached latent into
// per-head keys and values (cheap when many queries share them: prefill); the absorbed path
// folds kv_b_proj into the query and the output and attends in latent space (decode).
#pragma once

#include <cstdint>

#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"
#include "engine/model/model.h"
#include "engine/model/rotary_embedding.h"

namespace di::engine::deepseek_v2 {

enum class MlaPath {
  kAuto,      // whichever needs fewer multiply-adds for this chunk
  kPlain,     // expand latents into keys and values
  kAbsorbed,  // attend in latent space
};

// The path kAuto takes for `num_tokens` new tokens after `start_pos` cached ones.
MlaPath choose_mla_path(const MlaConfig& c, int64_t num_tokens, int64_t start_pos);

// Attention of layer `layer` for seq's new tokens: h [num_tokens, hidden] (normed input) ->
// out [num_tokens, hidden] (after o_proj). Writes the new latents into the cache group
// `cache_group` first.
void mla_attention(const MlaConfig& c, const MlaAttentionWeights& w, const RotaryEmbedding& rope, int32_t layer,
                   int32_t cache_group, const SequenceInput& seq, MlaPath path, const float* h, float* out);

}  // namespace di::engine::deepseek_v2
