// Speculative decoding's acceptance rule for sampled requests: a draft token d drawn from the
// draft distribution q is kept with probability min(1, p(d) / q(d)), p being the target model's
// distribution at that position; when it is not, the token is drawn from max(0, p - q)
// renormalised. Either way the token is distributed exactly as p, so speculation never changes
// what a request samples from. The draws are keyed by (seed, completion index, position) in
// domains of their own, apart from the sampler's, so a run is reproducible.
#pragma once

#include <cstdint>
#include <span>

namespace di::engine {

enum class SpecDraw : uint64_t {
  kDraft = 0x6472616674ULL,     // drawing a draft token from q
  kAccept = 0x616363657074ULL,  // the acceptance test
  kResidual = 0x7265736964ULL,  // the replacement from max(0, p - q)
};

// A uniform in [0, 1) of `domain` at the key.
double spec_uniform(SpecDraw domain, uint64_t seed, uint64_t index, uint64_t position);

// The token inverse-CDF (id order) of `probs` puts u in; the last token with mass when rounding
// runs past the end; -1 when no token has mass.
int32_t draw_from(std::span<const double> probs, double u);

struct DraftVerdict {
  bool accepted = false;
  int32_t token = -1;  // the draft when accepted, else the replacement
};

// The acceptance rule at one position: `p` the target distribution, `q` the one `draft` was
// drawn from (empty: all of q's mass on draft, as for a draft picked by argmax).
DraftVerdict verify_draft(std::span<const double> p, std::span<const float> q, int32_t draft, uint64_t seed,
                          uint64_t index, uint64_t position);

}  // namespace di::engine
