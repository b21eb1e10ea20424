// Manifold-constrained hyper-connections (mHC) on the GPU: the residual is hc streams per token.
// The mixing logits come from a GEMM the caller runs (normalised streams times the site's fn);
// these kernels turn them into the collapse, placement and Sinkhorn-projected stream mix, apply
// them, and fill the streams from the embedding. All fp32, as transformers keeps mHC in fp32.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

// streams[i, k, :] = table[ids[i], :] for every stream k < hc; table [vocab, dim] of `dtype`.
Status hc_embed(const int32_t* ids, int64_t rows, const void* table, int64_t dim, int32_t hc, DType dtype,
                float* streams, void* stream);

// Mixing logits for a few rows without a GEMM: parts[p, r, j] = the sum over slice p of the
// width of streams[r, :] * fn[j, :] (fn [out, width] fp32), for p < hc_mix_parts(out); hc_pre and
// hc_head add the parts in order (their mix_parts). cuBLAS takes a one-row, 24-column product
// over 16k inputs as split-K plus a reduce; this is one launch whose row sums do not depend on
// the row count (a decode row gets the same bits alone or in a verify batch).
inline constexpr int64_t kHcMixMaxRows = 16;
// Width slices: enough blocks to fill the GPU for V4's 24 mixing logits and its head's 4.
inline constexpr int32_t hc_mix_parts(int64_t out) { return out >= 16 ? 8 : 32; }
// Whether hc_mix takes it: 1..kHcMixMaxRows rows, width a multiple of 4 * parts, both 16-byte
// aligned. Anything else is an error from hc_mix (callers use a GEMM instead).
bool hc_mix_fits(int64_t rows, int64_t width, int64_t out, const float* streams, const float* fn);
Status hc_mix(const float* streams, int64_t rows, int64_t width, const float* fn, int64_t out, float* parts,
              void* stream);

// From mixes [mix_parts, rows, (2 + hc) * hc] (summed over the parts; 1 for a GEMM's result) (scale [3], base [(2 + hc) * hc]): pre = sigmoid(m * scale0 +
// base) + eps, post = 2 sigmoid(...), comb = softmax rows + eps then Sinkhorn (a column pass, then
// iters - 1 row + column passes); collapsed [rows, dim] = sum_k pre[k] * streams[:, k, :].
// rms_eps >= 0: mixes came from the raw streams, and are first scaled by 1 / rms of the row's
// streams (rms_eps its epsilon): the RMSNorm before the GEMM is a per-row scalar, so it folds in.
Status hc_pre(const float* mixes, int32_t mix_parts, const float* base, const float* scale, const float* streams,
              int64_t rows, int32_t hc, int64_t dim, int32_t sinkhorn_iters, float eps, float* collapsed, float* post,
              float* comb, void* stream, float rms_eps = -1.f);

// streams[:, k, :] = post[k] * out + sum_j comb[j][k] * streams[:, j, :], in place.
Status hc_post(const float* out, const float* post, const float* comb, int64_t rows, int32_t hc, int64_t dim,
               float* streams, void* stream);

// The final collapse: y = sum_k (sigmoid(mixes[k] * scale[0] + base[k]) + eps) * streams[:, k, :],
// mixes [mix_parts, rows, hc] as hc_pre's.
Status hc_head(const float* mixes, int32_t mix_parts, const float* base, const float* scale, const float* streams,
               int64_t rows, int32_t hc, int64_t dim, float eps, float* y, void* stream, float rms_eps = -1.f);

// The most streams these kernels take.
constexpr int32_t kMaxHcStreams = 16;

}  // namespace di::kernels::cuda
