// The input of a multi-token-prediction (MTP) block: the projected next-token embedding added to
// every one of a token's hc projected main-model streams. fp32.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::kernels::cuda {

// streams[i, k, :] += add[i, :] for i < rows, k < hc; streams [rows, hc, dim], add [rows, dim].
Status add_to_streams(float* streams, const float* add, int64_t rows, int32_t hc, int64_t dim, void* stream);

}  // namespace di::kernels::cuda
