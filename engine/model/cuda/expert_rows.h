// ExpertRows: turns a MoE layer's routing (top-k expert ids and weights per token, on the device)
// into per-expert row lists for gather -> expert MLP -> weighted scatter-add, in expert order as
// the CPU models add them. It launches no expert work. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace di::engine::cuda {

class ExpertRows {
 public:
  // Reads `rows` x `top_k` routed ids and weights back to the host (one sync: the row lists are
  // built there), groups the (row, weight) pairs by expert and uploads them, asynchronously on
  // `stream`, to `d_rows` / `d_row_weights`. Returns the experts + 1 offsets into those lists:
  // expert e owns [offsets[e], offsets[e + 1]). The host copies stay alive here until the next
  // call, which syncs before it rewrites them. `family` names the model in the error of an
  // out-of-range expert id.
  Result<std::vector<int64_t>> group(const int32_t* d_expert_ids, const float* d_expert_weights, int64_t rows,
                                     int64_t top_k, int64_t experts, int32_t* d_rows, float* d_row_weights,
                                     void* stream, const std::string& family);

 private:
  std::vector<int32_t> expert_ids_, rows_;
  std::vector<float> expert_weights_, row_weights_;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
