// DeepSeek MoE routing on the GPU: router logits -> scores (sqrtsoftplus, sigmoid or softmax),
// experts chosen by the (optionally biased: the correction bias steers the choice only) score
// top-k, optionally limited to the best expert groups (V2 group-limited greedy, V3 noaux_tc), or
// by the token's row of a hash table (V4); weights = the chosen scores, optionally normalised
// over the chosen ones, times the routed scaling factor. fp32; a warp per token up to 256
// experts, a block per token beyond.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

enum class RouterScore : int32_t { kSqrtSoftplus = 0, kSigmoid = 1, kSoftmax = 2 };

// How an expert group ranks when only the best topk_group groups may be chosen from.
enum class GroupScore : int32_t {
  kMax = 0,      // its best (biased) score: DeepSeek-V2's group_limited_greedy
  kTop2Sum = 1,  // the sum of its best two biased scores: DeepSeek-V3's noaux_tc
};

struct RoutingArgs {
  const float* logits = nullptr;   // [rows, experts]
  int64_t rows = 0;
  int32_t experts = 0;
  int32_t top_k = 0;
  RouterScore score = RouterScore::kSqrtSoftplus;
  const float* bias = nullptr;     // [experts]: added to the scores for the choice only (null: none)
  const int32_t* tid2eid = nullptr;  // [vocab, top_k]: hash routing by token id
  const int32_t* tokens = nullptr;   // [rows], for hash routing
  // Group-limited choice: experts split into n_group equal groups; only the topk_group best
  // groups (ties to the lower group) compete. n_group 1: no limit.
  int32_t n_group = 1;
  int32_t topk_group = 1;
  GroupScore group_score = GroupScore::kMax;
  bool normalize = true;  // divide the chosen scores by their sum (V4; V3's norm_topk_prob)
  float routed_scaling = 1.f;
  int32_t* expert_ids = nullptr;   // [rows, top_k]
  float* expert_weights = nullptr;  // [rows, top_k]
  bool force_block = false;  // the block-per-token kernel at any width (tests compare the two)
};

// The most experts per token this kernel picks.
constexpr int32_t kMaxRoutedPerToken = 32;
// The most expert groups the group-limited choice handles.
constexpr int32_t kMaxExpertGroups = 64;

Status moe_route(const RoutingArgs& args, void* stream);

}  // namespace di::kernels::cuda
