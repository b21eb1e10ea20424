// The DeepSeekMoE block: see moe.h. Routing follows transformers 5.17's DeepseekV2TopkRouter and
// DeepseekV3TopkRouter; tokens are grouped per expert so each expert's weights stream once.
#include "engine/model/deepseek_v2/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/model/routed_experts.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"

namespace di::engine::deepseek_v2 {
namespace cpu = di::kernels::cpu;

namespace {

// Indices of the k largest of values[0..n) (ties to the lower index), in descending order.
void top_k(const float* values, int64_t n, int64_t k, int32_t* out) {
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  std::copy(idx.begin(), idx.begin() + k, out);
}

// Keeps only the experts of the topk_group groups with the best group scores: the others'
// entries in `choice` become -inf.
void mask_groups(const MlaConfig& c, const std::vector<float>& group_scores, std::vector<float>& choice) {
  const int64_t per_group = c.n_routed_experts / c.n_group;
  std::vector<int32_t> keep(static_cast<size_t>(c.topk_group));
  top_k(group_scores.data(), c.n_group, c.topk_group, keep.data());
  std::vector<char> kept(static_cast<size_t>(c.n_group), 0);
  for (int32_t g : keep) kept[g] = 1;
  for (int64_t e = 0; e < c.n_routed_experts; ++e)
    if (!kept[e / per_group]) choice[e] = -INFINITY;
}

}  // namespace

void mlp_forward(const MlpWeights& m, int64_t hidden, const float* x, int64_t rows, float* y) {
  const int64_t I = m.intermediate;
  std::vector<float> gate(static_cast<size_t>(rows * I)), up(static_cast<size_t>(rows * I));
  cpu::linear(x, rows, m.gate, gate.data());
  cpu::linear(x, rows, m.up, up.data());
  cpu::add_bias(gate.data(), rows, I, I, m.gate_bias);
  cpu::add_bias(up.data(), rows, I, I, m.up_bias);
  cpu::silu_and_mul(gate.data(), up.data(), rows * I, gate.data());
  cpu::linear(gate.data(), rows, m.down, y);
  cpu::add_bias(y, rows, hidden, hidden, m.down_bias);
}

void route_token(const MlaConfig& c, const MoeWeights& m, const float* logits, int32_t* experts, float* weights) {
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok, per_group = E / c.n_group;
  std::vector<float> scores(logits, logits + E);
  if (c.routing == Routing::kSigmoidNoAux) {
    for (float& s : scores) s = 1.0f / (1.0f + std::exp(-s));
    // The bias only steers which experts win (auxiliary-loss-free balancing); the combine
    // weights use the raw sigmoid scores.
    std::vector<float> choice(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) choice[e] = scores[e] + m.e_score_correction_bias[e];
    std::vector<float> group_scores(static_cast<size_t>(c.n_group));
    for (int64_t g = 0; g < c.n_group; ++g) {  // a group ranks by its best two experts
      int32_t best[2];
      top_k(choice.data() + g * per_group, per_group, 2, best);
      group_scores[g] = choice[g * per_group + best[0]] + choice[g * per_group + best[1]];
    }
    mask_groups(c, group_scores, choice);
    top_k(choice.data(), E, K, experts);
  } else {
    const float mx = *std::max_element(scores.begin(), scores.end());
    float sum = 0.f;
    for (float& s : scores) sum += (s = std::exp(s - mx));
    for (float& s : scores) s /= sum;
    if (c.routing == Routing::kSoftmaxGroupLimited) {  // a group ranks by its best expert
      std::vector<float> group_scores(static_cast<size_t>(c.n_group));
      for (int64_t g = 0; g < c.n_group; ++g)
        group_scores[g] = *std::max_element(scores.begin() + g * per_group, scores.begin() + (g + 1) * per_group);
      std::vector<float> choice = scores;
      mask_groups(c, group_scores, choice);
      top_k(choice.data(), E, K, experts);
    } else {
      top_k(scores.data(), E, K, experts);
    }
  }
  for (int64_t k = 0; k < K; ++k) weights[k] = scores[experts[k]];
  // transformers' deepseek_v2 router never renormalises (every released V2 checkpoint sets
  // norm_topk_prob false, so DeepSeek's own code agrees); deepseek_v3 honours the flag.
  if (c.norm_topk_prob && c.routing == Routing::kSigmoidNoAux) {
    float sum = 0.f;
    for (int64_t k = 0; k < K; ++k) sum += weights[k];
    for (int64_t k = 0; k < K; ++k) weights[k] /= sum + 1e-20f;
  }
  for (int64_t k = 0; k < K; ++k) weights[k] *= static_cast<float>(c.routed_scaling_factor);
}

void moe_forward(const MlaConfig& c, const MoeWeights& m, const float* h, int64_t rows, float* out) {
  const int64_t H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok;
  std::vector<float> logits(static_cast<size_t>(rows * E));
  cpu::linear(h, rows, H, m.gate, E, logits.data());
  ExpertRoutes routed(static_cast<size_t>(E));
  std::vector<int32_t> idx(static_cast<size_t>(K));
  std::vector<float> wts(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    route_token(c, m, logits.data() + r * E, idx.data(), wts.data());
    for (int64_t k = 0; k < K; ++k) routed[idx[k]].push_back({r, wts[k]});
  }
  if (m.shared.intermediate > 0) {
    mlp_forward(m.shared, H, h, rows, out);
  } else {
    std::fill(out, out + rows * H, 0.0f);
  }
  add_routed_experts(routed, h, H, out, [&](size_t e, const float* x, int64_t n, float* y) {
    mlp_forward(m.experts[e], H, x, n, y);
  });
}

}  // namespace di::engine::deepseek_v2
