// Rotary embedding with rotate_half pairing (i, i + rot_dim / 2) on the trailing rot_dim channels
// of each vector, each row at its own position (device int32, one per row: a step of many
// sequences). DeepSeek-V3 checkpoints with rope_interleave false take it on the query's and the
// latent cache entry's rope channels. fp32 in place; cos/sin as elementwise.h's rope_half
// computes them, so both agree bit for bit.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// x: `rows` rows `row_stride` floats apart, each holding `count` vectors of `width` floats
// (`width` apart); channels width - rot_dim + i and + i + rot_dim / 2 rotate by
// positions[r] * inv_freq[i] (inv_freq on the device, rot_dim / 2 of them), cos and sin times
// `scaling`.
Status rope_half_at(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width,
                    const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scaling, void* stream);

}  // namespace di::kernels::cuda
