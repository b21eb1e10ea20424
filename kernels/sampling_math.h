// The sampler's arithmetic, shared by the CPU sampler and the device sampler so that both keep the
// same candidate set and draw the same token from the same logits and key.
//
// A draw works on fixed-point weights: w_i = round(exp((x_i - max) / T) * 2^40), an integer per
// token (0 for excluded ones). Sums of integers do not depend on the order they are added in, so a
// parallel reduction on the GPU and a loop on the CPU agree exactly on every mass the truncations
// and the draw compare; only exp() itself may differ in its last bit between the two math
// libraries, which moves a weight by one unit in 2^40. Tokens below 2^-41 of the most likely one
// get weight 0 (they could not be drawn in a trillion tries anyway).
//
// The candidate set, in order: top-k keeps every token whose logit is at least the k-th largest
// (ties at the boundary stay, as in vLLM); top-p keeps every token whose strictly more likely
// tokens weigh less than top_p of the top-k set; min-p keeps weights of at least min_p of the top
// token's. The draw is then inverse-CDF over the kept weights in token-id order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/host_device.h"

namespace di::kernels {

constexpr double kGreedyBelow = 1e-5;     // temperatures this small are greedy (avoids overflow)
constexpr double kWeightOne = 0x1.0p40;   // fixed-point weight of the most likely token
constexpr int32_t kMaxTopLogprobs = 20;

// An unsigned key ordered as the float is (-inf lowest, +inf highest); NaN is refused earlier.
DI_HOST_DEVICE inline uint32_t order_key(float x) {
  uint32_t b;
#if defined(__CUDA_ARCH__)
  b = __float_as_uint(x);
#else
  std::memcpy(&b, &x, 4);
#endif
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// The fixed-point weight of a logit; `max_logit` is the row's largest (finite) logit.
DI_HOST_DEVICE inline uint64_t draw_weight(float x, float max_logit, double temperature) {
  if (!(x > -INFINITY)) return 0;
  const double w = exp((static_cast<double>(x) - static_cast<double>(max_logit)) / temperature);
  return static_cast<uint64_t>(llround(w * kWeightOne));
}

// top-p: a token whose strictly more likely tokens weigh `mass_above` (out of `total`) stays.
DI_HOST_DEVICE inline bool top_p_keeps(uint64_t mass_above, uint64_t total, double top_p) {
  return static_cast<double>(mass_above) < top_p * static_cast<double>(total);
}

// min-p: relative to the top token, whose weight is kWeightOne.
DI_HOST_DEVICE inline bool min_p_keeps(uint64_t weight, double min_p) {
  return static_cast<double>(weight) >= min_p * kWeightOne;
}

// The weight offset the draw lands on: the kept token whose cumulative weight (in id order)
// first exceeds it is the sample. `total` > 0.
DI_HOST_DEVICE inline uint64_t draw_target(double u, uint64_t total) {
  const auto t = static_cast<uint64_t>(u * static_cast<double>(total));
  return t < total ? t : total - 1;
}

}  // namespace di::kernels
