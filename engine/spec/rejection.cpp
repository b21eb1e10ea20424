// The acceptance rule: see rejection.h.
#include "engine/spec/rejection.h"

#include <algorithm>
#include <vector>

#include "kernels/keyed_rng.h"

namespace di::engine {

double spec_uniform(SpecDraw domain, uint64_t seed, uint64_t index, uint64_t position) {
  return kernels::keyed_uniform(kernels::rng_mix(seed ^ static_cast<uint64_t>(domain)), index, position);
}

int32_t draw_from(std::span<const double> probs, double u) {
  double total = 0;
  int32_t last = -1;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    total += probs[i];
    last = static_cast<int32_t>(i);
  }
  if (last < 0) return -1;
  const double target = u * total;
  double cum = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    cum += probs[i];
    if (cum > target) return static_cast<int32_t>(i);
  }
  return last;
}

DraftVerdict verify_draft(std::span<const double> p, std::span<const float> q, int32_t draft, uint64_t seed,
                          uint64_t index, uint64_t position) {
  DraftVerdict v;
  if (draft < 0 || static_cast<size_t>(draft) >= p.size()) {
    v.token = draw_from(p, spec_uniform(SpecDraw::kResidual, seed, index, position));
    return v;
  }
  const double qd = q.empty() ? 1.0 : static_cast<double>(q[draft]);
  // u < p/q without the division (q(d) > 0 for a token drawn from q).
  if (spec_uniform(SpecDraw::kAccept, seed, index, position) * qd < p[draft]) {
    v.accepted = true;
    v.token = draft;
    return v;
  }
  std::vector<double> residual(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const double qi = q.empty() ? (static_cast<int32_t>(i) == draft ? 1.0 : 0.0) : static_cast<double>(q[i]);
    residual[i] = std::max(0.0, p[i] - qi);
  }
  const double u = spec_uniform(SpecDraw::kResidual, seed, index, position);
  v.token = draw_from(residual, u);
  if (v.token < 0) v.token = draw_from(p, u);  // p == q up to rounding: p itself
  return v;
}

}  // namespace di::engine
