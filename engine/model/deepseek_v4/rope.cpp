// Rope: see rope.h. V4's config already resolved YaRN's attention factor (config.cpp), so it is
// passed as given; the correction range is truncated to whole channels as transformers does.
#include "engine/model/deepseek_v4/rope.h"

namespace di::engine::deepseek_v4 {

Rope::Rope(const RopeConfig& c) {
  engine::RopeConfig r;
  r.rope_type = c.rope_type == "yarn" ? "yarn" : "default";
  r.rope_theta = c.rope_theta;
  r.dim = c.dim;
  r.factor = c.factor;
  r.original_max_position_embeddings = c.original_max_position_embeddings;
  r.beta_fast = c.beta_fast;
  r.beta_slow = c.beta_slow;
  r.attention_factor = c.attention_factor;
  r.truncate = true;
  rotary_ = RotaryEmbedding(r, RopeLayout::kInterleaved);
}

}  // namespace di::engine::deepseek_v4
