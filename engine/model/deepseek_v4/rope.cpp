// Rope: see rope.h. V4's config already resolved YaRN's attention factor (config.cpp), so it is
// passed as given; the correction range is truncated to whole channels as transformers does.
#include "engine/model/deepseek_v4/rope.h"

namespace di::engine::deepseek_v4 {

Rope::Rope(const RopeConfig& c)
    : rotary_(engine::RopeConfig{.rope_type = c.rope_type == "yarn" ? "yarn" : "default",
                                 .rope_theta = c.rope_theta,
                                 .dim = c.dim,
                                 .factor = c.factor,
                                 .original_max_position_embeddings = c.original_max_position_embeddings,
                                 .beta_fast = c.beta_fast,
                                 .beta_slow = c.beta_slow,
                                 .attention_factor = c.attention_factor,
                                 .truncate = true},
              RopeLayout::kInterleaved) {}

}  // namespace di::engine::deepseek_v4
