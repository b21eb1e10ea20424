// The deepseek_v4 feed-forward block: routed experts chosen by score top-k (with the correction
// bias) or by the token's hash row (tid2eid), weighted by the normalised scores, plus the shared
// expert; every expert is a SwiGLU with clipped gate and up pre-activations.
#pragma once

#include <cstdint>

#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

// h [rows, hidden] (already normed), tokens [rows] -> out [rows, hidden].
void moe_forward(const DeepseekV4Config& c, const MoeWeights& w, bool hash_routed,
                 const int32_t* tokens, const float* h, int64_t rows, float* out);

}  // namespace di::engine::deepseek_v4
