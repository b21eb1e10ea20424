// DeepSeek-V4 MoE routing on the GPU: router logits -> scores (sqrtsoftplus, sigmoid or softmax),
// experts chosen by the biased score top-k (the correction bias steers the choice only) or by the
// token's row of a hash table, weights = chosen scores normalised over the chosen ones times the
// routed scaling factor. fp32; one thread per token.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

enum class RouterScore : int32_t { kSqrtSoftplus = 0, kSigmoid = 1, kSoftmax = 2 };

struct RoutingArgs {
  float* logits = nullptr;         // [rows, experts]; overwritten with the scores
  int64_t rows = 0;
  int32_t experts = 0;
  int32_t top_k = 0;
  RouterScore score = RouterScore::kSqrtSoftplus;
  const float* bias = nullptr;     // [experts]: score-top-k routing (null with a hash table)
  const int32_t* tid2eid = nullptr;  // [vocab, top_k]: hash routing by token id
  const int32_t* tokens = nullptr;   // [rows], for hash routing
  float routed_scaling = 1.f;
  int32_t* expert_ids = nullptr;   // [rows, top_k]
  float* expert_weights = nullptr;  // [rows, top_k]
};

// The most experts per token this kernel picks.
constexpr int32_t kMaxRoutedPerToken = 32;

Status moe_route(const RoutingArgs& args, void* stream);

}  // namespace di::kernels::cuda
