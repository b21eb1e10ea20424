// moe_forward: see moe.h. Tokens are grouped per expert so each expert's weights stream once.
#include "engine/model/deepseek_v4/moe.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/model/routed_experts.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/quant_linear.h"

namespace di::engine::deepseek_v4 {
namespace {

// SwiGLU with DeepSeek-V4's clipping: gate <= limit, |up| <= limit. x [rows, hidden] -> y.
void expert_mlp(const DeepseekV4Config& c, const ExpertWeights& e, const float* x, int64_t rows,
                float* y) {
  const int64_t I = c.moe_intermediate_size;
  const float limit = static_cast<float>(c.swiglu_limit);
  std::vector<float> gate(static_cast<size_t>(rows * I)), up(static_cast<size_t>(rows * I));
  kernels::cpu::linear(x, rows, e.w1, gate.data());
  kernels::cpu::linear(x, rows, e.w3, up.data());
  for (int64_t i = 0; i < rows * I; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::clamp(up[i], -limit, limit);
    gate[i] = g / (1.0f + std::exp(-g)) * u;
  }
  kernels::cpu::linear(gate.data(), rows, e.w2, y);
}

float score(ScoringFunc f, float x) {
  switch (f) {
    case ScoringFunc::kSqrtSoftplus:  // torch's softplus is linear above 20
      return std::sqrt(x > 20.0f ? x : std::log1p(std::exp(x)));
    case ScoringFunc::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case ScoringFunc::kSoftmax:
      return x;  // normalised over the row below
  }
  return x;
}

}  // namespace

void moe_forward(const DeepseekV4Config& c, const MoeWeights& w, bool hash_routed,
                 const int32_t* tokens, const float* h, int64_t rows, float* out) {
  const int64_t H = c.hidden_size, E = c.n_routed_experts, K = c.num_experts_per_tok;
  std::vector<float> scores(static_cast<size_t>(rows * E));
  kernels::cpu::linear(h, rows, H, w.gate, E, scores.data());
  ExpertRoutes routed(static_cast<size_t>(E));
  std::vector<int32_t> idx(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = scores.data() + r * E;
    for (int64_t e = 0; e < E; ++e) sr[e] = score(c.scoring_func, sr[e]);
    if (c.scoring_func == ScoringFunc::kSoftmax) {
      const float mx = *std::max_element(sr, sr + E);
      float sum = 0.f;
      for (int64_t e = 0; e < E; ++e) sum += (sr[e] = std::exp(sr[e] - mx));
      for (int64_t e = 0; e < E; ++e) sr[e] /= sum;
    }
    if (hash_routed) {
      for (int64_t k = 0; k < K; ++k) idx[k] = w.tid2eid[static_cast<int64_t>(tokens[r]) * K + k];
    } else {  // the bias only steers which experts win; weights use the raw scores
      std::vector<std::pair<float, int32_t>> biased(static_cast<size_t>(E));
      for (int64_t e = 0; e < E; ++e) biased[e] = {sr[e] + w.bias[e], static_cast<int32_t>(e)};
      std::partial_sort(biased.begin(), biased.begin() + K, biased.end(),
                        [](const auto& a, const auto& b) { return a.first > b.first; });
      for (int64_t k = 0; k < K; ++k) idx[k] = biased[k].second;
    }
    float sum = 0.f;
    for (int64_t k = 0; k < K; ++k) sum += sr[idx[k]];
    for (int64_t k = 0; k < K; ++k)
      routed[idx[k]].push_back({r, sr[idx[k]] / (sum + 1e-20f) * static_cast<float>(c.routed_scaling_factor)});
  }

  expert_mlp(c, w.shared, h, rows, out);
  add_routed_experts(routed, h, H, out, [&](size_t e, const float* x, int64_t n, float* y) {
    expert_mlp(c, w.experts[e], x, n, y);
  });
}

}  // namespace di::engine::deepseek_v4
