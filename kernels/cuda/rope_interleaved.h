// Rotary embedding with interleaved pairs on the trailing channels of each vector (DeepSeek-V4:
// partial rope on the last `rot_dim` channels, pairs (2i, 2i+1)), forward or inverse, with any
// inverse frequencies (default or YaRN) and a cos/sin scale. fp32 in place; knows no model.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// x: `rows` rows `row_stride` floats apart, each holding `count` vectors of `width` floats
// `vec_stride` apart; row r is at position pos0 + r * pos_step. Channels width - rot_dim + 2i
// and +2i+1 rotate by angle position * inv_freq[i] (fp32 product; cos and sin in double, as the
// CPU model), both scaled by `scale`; inverse rotates by minus that angle. inv_freq on the device.
Status rope_interleaved(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width, int64_t vec_stride,
                        int64_t pos0, int64_t pos_step, const float* inv_freq, int64_t rot_dim, float scale,
                        bool inverse, void* stream);

// The same with row r at position positions[r] (device int32, one per row): a step of many
// sequences, each row at its own position.
Status rope_interleaved_at(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width, int64_t vec_stride,
                           const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale, bool inverse,
                           void* stream);

// rms_norm (elementwise.h: each of a row's `heads` vectors of `dim` floats, `stride` between rows,
// times `weight` [dim] when given) and then rope_interleaved_at (forward) on the same vectors, in
// one launch with the two ops' arithmetic and so their bits: V4 norms and ropes its queries and
// its key a layer, four decode launches of a few microseconds each before. `norm_dim` below dim
// (and at most dim - rot_dim) norms only each vector's first norm_dim channels (weight
// [norm_dim]) and leaves the rest as they are before the rope: DeepSeek-V2/V3's latent entry,
// kv_a_layernorm over the latent and rope over k_pe.
Status rms_norm_rope_at(float* x, const float* weight, int64_t rows, int64_t heads, int64_t dim, int64_t stride,
                        float eps, const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale,
                        void* stream, int64_t norm_dim = -1);

// Two rms_norm_rope_at's over vectors of one width and the same rows' positions in one launch
// (V4's queries, `heads` unweighted vectors a row, and its key, one weighted vector), each with
// the bits it has alone. b.heads 0: a alone.
struct NormRopeJob {
  float* x = nullptr;
  const float* weight = nullptr;  // [norm_dim] or none
  int64_t heads = 0;
  int64_t stride = 0;  // between rows
};
Status rms_norm_rope_pair_at(const NormRopeJob& a, const NormRopeJob& b, int64_t rows, int64_t dim, float eps,
                             const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scale,
                             void* stream, int64_t norm_dim = -1);

}  // namespace di::kernels::cuda
