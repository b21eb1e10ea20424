// moe_route: see moe_routing.h. One thread per token walks its experts; the top-k is k passes
// of an argmax (ties to the lower expert id). Router rows are short (hundreds of experts).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/moe_routing.h"

namespace di::kernels::cuda {
namespace {

__global__ void route_kernel(RoutingArgs a) {
  const int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (r >= a.rows) return;
  const int E = a.experts, K = a.top_k;
  float* s = a.logits + r * E;
  for (int e = 0; e < E; ++e) {
    const float x = s[e];
    switch (a.score) {
      case RouterScore::kSqrtSoftplus:  // softplus is linear above 20, as torch's
        s[e] = sqrtf(x > 20.0f ? x : log1pf(expf(x)));
        break;
      case RouterScore::kSigmoid:
        s[e] = 1.0f / (1.0f + expf(-x));
        break;
      case RouterScore::kSoftmax:
        break;
    }
  }
  if (a.score == RouterScore::kSoftmax) {
    float mx = -INFINITY;
    for (int e = 0; e < E; ++e) mx = fmaxf(mx, s[e]);
    float sum = 0.f;
    for (int e = 0; e < E; ++e) sum += (s[e] = expf(s[e] - mx));
    for (int e = 0; e < E; ++e) s[e] /= sum;
  }
  int32_t* idx = a.expert_ids + r * K;
  if (a.tid2eid) {
    for (int k = 0; k < K; ++k) idx[k] = a.tid2eid[static_cast<int64_t>(a.tokens[r]) * K + k];
  } else {
    // Group limit: experts of groups outside the best topk_group compete at -inf (as the CPU
    // routers mask them), so ties and order stay those of a plain top-k.
    bool kept[kMaxExpertGroups];
    const int G = a.n_group, per = E / G;
    for (int g = 0; g < G; ++g) kept[g] = G == 1;
    if (G > 1) {
      float gs[kMaxExpertGroups];
      for (int g = 0; g < G; ++g) {
        float b1 = -INFINITY, b2 = -INFINITY;
        for (int e = g * per; e < (g + 1) * per; ++e) {
          const float v = s[e] + (a.bias ? a.bias[e] : 0.f);
          if (v > b1) {
            b2 = b1;
            b1 = v;
          } else if (v > b2) {
            b2 = v;
          }
        }
        gs[g] = a.group_score == GroupScore::kTop2Sum ? b1 + b2 : b1;
      }
      for (int t = 0; t < a.topk_group; ++t) {
        int best = -1;
        for (int g = 0; g < G; ++g)
          if (!kept[g] && (best < 0 || gs[g] > gs[best])) best = g;
        kept[best] = true;
      }
    }
    for (int k = 0; k < K; ++k) {
      int best = -1;
      float bv = -INFINITY;
      for (int e = 0; e < E; ++e) {
        bool taken = false;
        for (int j = 0; j < k; ++j) taken |= idx[j] == e;
        if (taken) continue;
        const float v = kept[e / per] ? s[e] + (a.bias ? a.bias[e] : 0.f) : -INFINITY;
        if (best < 0 || v > bv) {
          best = e;
          bv = v;
        }
      }
      idx[k] = best;
    }
  }
  float sum = 0.f;
  for (int k = 0; k < K; ++k) sum += s[idx[k]];
  const float div = a.normalize ? sum + 1e-20f : 1.f;
  for (int k = 0; k < K; ++k) a.expert_weights[r * K + k] = s[idx[k]] / div * a.routed_scaling;
}

}  // namespace

Status moe_route(const RoutingArgs& a, void* stream) {
  if (a.rows <= 0) return Status::ok();
  if (a.top_k < 1 || a.top_k > kMaxRoutedPerToken || a.top_k > a.experts)
    return Status::invalid_argument("moe_route: top_k " + std::to_string(a.top_k) + " must be in [1, min(experts, " +
                                    std::to_string(kMaxRoutedPerToken) + ")]");
  if (a.n_group < 1 || a.n_group > kMaxExpertGroups || a.experts % a.n_group || a.topk_group < 1 ||
      a.topk_group > a.n_group)
    return Status::invalid_argument("moe_route: n_group " + std::to_string(a.n_group) + " must divide experts " +
                                    std::to_string(a.experts) + ", be <= " + std::to_string(kMaxExpertGroups) +
                                    " and >= topk_group " + std::to_string(a.topk_group) + " >= 1");
  if (a.tid2eid && !a.tokens) return Status::invalid_argument("moe_route: hash routing needs the token ids");
  const int threads = 128;
  route_kernel<<<(a.rows + threads - 1) / threads, threads, 0, as_stream(stream)>>>(a);
  return launch_status("moe_route");
}

}  // namespace di::kernels::cuda
