// The routed half of a CPU MoE layer, shared by the families that route tokens to experts
// (deepseek_v2/v3 and deepseek_v4): each expert runs once over the rows routed to it, and its
// output is added into those rows scaled by their routing weight. Routing itself (softmax,
// sigmoid, group limits, hash tables) stays with each family.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace di::engine {

// routed[e]: the (row, weight) pairs sent to expert e.
using ExpertRoutes = std::vector<std::vector<std::pair<int64_t, float>>>;

// out[row] += weight * expert_e(h[row]) for every pair in routed[e]. `run_expert(e, x, n, y)`
// computes expert e on n gathered rows x into y (both [n, hidden]).
template <class RunExpert>
void add_routed_experts(const ExpertRoutes& routed, const float* h, int64_t hidden, float* out,
                        RunExpert&& run_expert) {
  std::vector<float> x, y;
  for (size_t e = 0; e < routed.size(); ++e) {
    const auto& list = routed[e];
    if (list.empty()) continue;
    const int64_t n = static_cast<int64_t>(list.size());
    x.resize(static_cast<size_t>(n * hidden));
    y.resize(static_cast<size_t>(n * hidden));
    for (int64_t i = 0; i < n; ++i)
      std::copy(h + list[i].first * hidden, h + (list[i].first + 1) * hidden, x.begin() + i * hidden);
    run_expert(e, x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      float* o = out + list[i].first * hidden;
      const float wt = list[i].second;
      for (int64_t d = 0; d < hidden; ++d) o[d] += y[i * hidden + d] * wt;
    }
  }
}

}  // namespace di::engine
