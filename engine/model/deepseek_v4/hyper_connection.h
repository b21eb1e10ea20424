// Manifold-constrained hyper-connections (mHC, DeepSeek-V4 paper §2.2): the residual is hc_mult
// streams per token. hc_pre collapses them into one sublayer input and computes how the
// sublayer output is placed back (post) and how streams mix (comb, Sinkhorn-projected onto
// doubly-stochastic matrices); hc_post applies that; hc_head collapses them for the final norm.
#pragma once

#include <cstdint>

#include "engine/model/deepseek_v4/config.h"
#include "engine/model/deepseek_v4/weights.h"

namespace di::engine::deepseek_v4 {

// streams [rows, hc, hidden] -> collapsed [rows, hidden], post [rows, hc], comb [rows, hc, hc].
void hc_pre(const DeepseekV4Config& c, const HcWeights& w, const float* streams, int64_t rows,
            float* collapsed, float* post, float* comb);

// streams[k] = post[k] * out + sum_j comb[j][k] * streams[j], per row, in place.
void hc_post(const DeepseekV4Config& c, const float* out, const float* post, const float* comb,
             int64_t rows, float* streams);

// streams [rows, hc, hidden] -> y [rows, hidden] with the final head's weights.
void hc_head(const DeepseekV4Config& c, const DeepseekV4Weights& w, const float* streams,
             int64_t rows, float* y);
// The same with a head's tensors given (an MTP layer has its own).
void hc_head(const DeepseekV4Config& c, const float* fn, const float* base, const float* scale,
             const float* streams, int64_t rows, float* y);

}  // namespace di::engine::deepseek_v4
