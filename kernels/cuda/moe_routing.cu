// moe_route: see moe_routing.h. One thread per token walks its experts; the top-k is k passes
// of an argmax (ties to the lower expert id). Router rows are short (hundreds of experts).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/moe_routing.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One block per token: a thread per expert scores it; the choice is top_k rounds of a block
// argmax (ties to the lower expert id, as the CPU routers' stable sorts).
__global__ void route_kernel(RoutingArgs a) {
  pdl_sync();
  extern __shared__ float smem[];
  float* s = smem;                 // [E] scores
  float* choice = smem + a.experts;  // [E] what competes (score + bias, -inf outside kept groups)
  __shared__ int chosen[kMaxRoutedPerToken];
  __shared__ bool kept[kMaxExpertGroups];
  const int64_t r = blockIdx.x;
  const int E = a.experts, K = a.top_k;
  const float* lg = a.logits + r * E;
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    const float x = lg[e];
    float v = x;
    switch (a.score) {
      case RouterScore::kSqrtSoftplus:  // softplus is linear above 20, as torch's
        v = sqrtf(x > 20.0f ? x : log1pf(expf(x)));
        break;
      case RouterScore::kSigmoid:
        v = 1.0f / (1.0f + expf(-x));
        break;
      case RouterScore::kSoftmax:
        break;
    }
    s[e] = v;
  }
  __syncthreads();
  if (a.score == RouterScore::kSoftmax) {
    float mx = -INFINITY;
    for (int e = threadIdx.x; e < E; e += blockDim.x) mx = fmaxf(mx, s[e]);
    mx = block_max(mx);
    float part = 0.f;
    for (int e = threadIdx.x; e < E; e += blockDim.x) part += (s[e] = expf(s[e] - mx));
    const float sum = block_sum(part);  // syncs: every s[e] is written
    for (int e = threadIdx.x; e < E; e += blockDim.x) s[e] /= sum;
    __syncthreads();
  }
  int32_t* idx = a.expert_ids + r * K;
  if (a.tid2eid) {
    if (threadIdx.x < K) chosen[threadIdx.x] = a.tid2eid[static_cast<int64_t>(a.tokens[r]) * K + threadIdx.x];
  } else {
    const int G = a.n_group, per = E / G;
    if (threadIdx.x == 0) {
      // Group limit: experts of groups outside the best topk_group compete at -inf (as the CPU
      // routers mask them), so ties and order stay those of a plain top-k. Few groups: one thread.
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
    }
    __syncthreads();
    for (int e = threadIdx.x; e < E; e += blockDim.x)
      choice[e] = kept[e / per] ? s[e] + (a.bias ? a.bias[e] : 0.f) : -INFINITY;
    for (int k = 0; k < K; ++k) {
      __syncthreads();  // the last pass's mark is visible
      float bv = -INFINITY;
      int bi = -1;
      for (int e = threadIdx.x; e < E; e += blockDim.x) argmax_merge(bv, bi, choice[e], e);
      const int b = block_argmax(bv, bi);
      if (threadIdx.x == 0) {
        chosen[k] = b;
        choice[b] = NAN;  // taken: never chosen again, even when all that is left is -inf
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int k = 0; k < K; ++k) sum += s[chosen[k]];
    const float div = a.normalize ? sum + 1e-20f : 1.f;
    for (int k = 0; k < K; ++k) {
      idx[k] = chosen[k];
      a.expert_weights[r * K + k] = s[chosen[k]] / div * a.routed_scaling;
    }
  }
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
  const size_t smem = static_cast<size_t>(2 * a.experts) * sizeof(float);
  if (smem > 48 * 1024) return Status::invalid_argument("moe_route: more than 6144 experts");
  launch_pdl(route_kernel, a.rows, kThreads, smem, as_stream(stream), a);
  return launch_status("moe_route");
}

}  // namespace di::kernels::cuda
