// DeepSeekMoE for deepseek_v2 / deepseek_v3 on the CPU: the router (softmax greedy, softmax
// group-limited, or sigmoid + correction bias + group-limited top-k), the routed experts and
// the shared experts; plus the dense SwiGLU MLP of the first layers.
#pragma once

#include <cstdint>

#include "engine/model/deepseek_v2/mla_config.h"
#include "engine/model/deepseek_v2/mla_weights.h"

namespace di::engine::deepseek_v2 {

// y [rows, hidden] = down(silu(gate x) * up x) (+ biases).
void mlp_forward(const MlpWeights& m, int64_t hidden, const float* x, int64_t rows, float* y);

// Picks num_experts_per_tok experts for one token from its router logits [n_routed_experts];
// writes their ids and combine weights (routed_scaling_factor applied).
void route_token(const MlaConfig& c, const MoeWeights& m, const float* router_logits, int32_t* experts,
                 float* weights);

// out [rows, hidden] = routed experts (weighted) + shared experts, for h [rows, hidden].
void moe_forward(const MlaConfig& c, const MoeWeights& m, const float* h, int64_t rows, float* out);

}  // namespace di::engine::deepseek_v2
