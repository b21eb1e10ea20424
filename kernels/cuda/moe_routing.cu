// moe_route: see moe_routing.h. The top-k is k passes of an argmax (ties to the lower expert
// id). Router rows are short (hundreds of experts): up to kWarpExperts a row is one warp's, its
// experts in registers and every reduction a shuffle (a decode row took 8 us through the block
// kernel's dozen __syncthreads on an H200); longer rows take a block each.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/moe_routing.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kPerLane = 8;
constexpr int kWarpExperts = 32 * kPerLane;
constexpr int kRowsPerBlock = 4;  // warps (rows) per block of the warp kernel

__device__ __forceinline__ float router_score(RouterScore score, float x) {
  switch (score) {
    case RouterScore::kSqrtSoftplus:  // softplus is linear above 20, as torch's
      return sqrtf(x > 20.0f ? x : log1pf(expf(x)));
    case RouterScore::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case RouterScore::kSoftmax:
      break;
  }
  return x;
}

// How group g ranks: its best biased score, or the sum of its best two (ties kept in order).
template <typename Biased>
__device__ __forceinline__ float group_rank(GroupScore how, int g, int per, Biased biased) {
  float b1 = -INFINITY, b2 = -INFINITY;
  for (int e = g * per; e < (g + 1) * per; ++e) {
    const float v = biased(e);
    if (v > b1) {
      b2 = b1;
      b1 = v;
    } else if (v > b2) {
      b2 = v;
    }
  }
  return how == GroupScore::kTop2Sum ? b1 + b2 : b1;
}

// The warp's best (value, index) by argmax_merge, on every lane.
__device__ __forceinline__ int warp_argmax(float v, int i) {
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, i, o);
    argmax_merge(v, i, ov, oi);
  }
  return i;
}

// A warp per token, experts <= kWarpExperts: lane l holds experts l, l + 32, ... The choice
// and weights are route_kernel's (same ties, same group rule); sums are taken in another order.
__global__ void __launch_bounds__(32 * kRowsPerBlock) route_warp_kernel(RoutingArgs a) {
  pdl_sync();
  __shared__ float choice_s[kRowsPerBlock][kWarpExperts];
  __shared__ bool kept_s[kRowsPerBlock][kMaxExpertGroups];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t r = int64_t{blockIdx.x} * kRowsPerBlock + warp;
  if (r >= a.rows) return;
  const int E = a.experts, K = a.top_k;
  const float* lg = a.logits + r * E;
  float s[kPerLane], c[kPerLane];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int e = lane + 32 * j;
    s[j] = e < E ? router_score(a.score, lg[e]) : 0.f;
  }
  if (a.score == RouterScore::kSoftmax) {
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j)
      if (lane + 32 * j < E) mx = fmaxf(mx, s[j]);
    mx = warp_max(mx);
    float part = 0.f;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j)
      if (lane + 32 * j < E) part += (s[j] = expf(s[j] - mx));
    const float sum = warp_sum(part);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) s[j] /= sum;
  }
  int32_t* idx = a.expert_ids + r * K;
  int my_pick = -1;  // lane k < K ends with the k-th choice
  if (a.tid2eid) {
    if (lane < K) my_pick = a.tid2eid[static_cast<int64_t>(a.tokens[r]) * K + lane];
  } else {
    const int G = a.n_group, per = E / G;
    bool* kept = kept_s[warp];
    if (G > 1) {
      float* biased = choice_s[warp];
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        const int e = lane + 32 * j;
        if (e < E) biased[e] = s[j] + (a.bias ? a.bias[e] : 0.f);
      }
      __syncwarp();
      // Lane g ranks groups g and g + 32; then topk_group rounds of a warp argmax (ties to the
      // lower group).
      float gs[2] = {-INFINITY, -INFINITY};
      for (int h = 0; h < 2; ++h) {
        const int g = lane + 32 * h;
        if (g >= G) continue;
        gs[h] = group_rank(a.group_score, g, per, [&](int e) { return biased[e]; });
        kept[g] = false;
      }
      for (int t = 0; t < a.topk_group; ++t) {
        float bv = -INFINITY;
        int bi = -1;
        for (int h = 0; h < 2; ++h)
          if (lane + 32 * h < G && !isnan(gs[h])) argmax_merge(bv, bi, gs[h], lane + 32 * h);
        const int best = warp_argmax(bv, bi);
        for (int h = 0; h < 2; ++h)
          if (lane + 32 * h == best) {
            kept[best] = true;
            gs[h] = NAN;  // taken
          }
      }
      __syncwarp();
    }
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int e = lane + 32 * j;
      c[j] = e >= E ? NAN : (G == 1 || kept[e / per]) ? s[j] + (a.bias ? a.bias[e] : 0.f) : -INFINITY;
    }
    for (int k = 0; k < K; ++k) {
      float bv = -INFINITY;
      int bi = -1;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) argmax_merge(bv, bi, c[j], lane + 32 * j);
      const int b = warp_argmax(bv, bi);
#pragma unroll
      for (int j = 0; j < kPerLane; ++j)
        if (lane + 32 * j == b) c[j] = NAN;  // taken: never chosen again, even when all left is -inf
      if (lane == k) my_pick = b;
    }
  }
  // Each lane k < K fetches its pick's score from the lane that holds it.
  float mine = 0.f;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int owner = my_pick >= 0 ? my_pick & 31 : 0;
    const float v = __shfl_sync(0xffffffffu, s[j], owner);
    if (lane < K && my_pick >= 0 && my_pick >> 5 == j) mine = v;
  }
  // The normalizing sum in k order, as route_kernel's thread 0 adds them.
  float sum = 0.f;
  for (int k = 0; k < K; ++k) sum += __shfl_sync(0xffffffffu, mine, k);
  const float div = a.normalize ? sum + 1e-20f : 1.f;
  if (lane < K) {
    idx[lane] = my_pick;
    a.expert_weights[r * K + lane] = mine / div * a.routed_scaling;
  }
}

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
  for (int e = threadIdx.x; e < E; e += blockDim.x) s[e] = router_score(a.score, lg[e]);
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
        for (int g = 0; g < G; ++g)
          gs[g] = group_rank(a.group_score, g, per, [&](int e) { return s[e] + (a.bias ? a.bias[e] : 0.f); });
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
  if (a.experts <= kWarpExperts && !a.force_block) {
    launch_pdl(route_warp_kernel, static_cast<unsigned>((a.rows + kRowsPerBlock - 1) / kRowsPerBlock),
               32 * kRowsPerBlock, 0, as_stream(stream), a);
    return launch_status("moe_route");
  }
  const size_t smem = static_cast<size_t>(2 * a.experts) * sizeof(float);
  if (smem > 48 * 1024) return Status::invalid_argument("moe_route: more than 6144 experts");
  launch_pdl(route_kernel, a.rows, kThreads, smem, as_stream(stream), a);
  return launch_status("moe_route");
}

}  // namespace di::kernels::cuda
