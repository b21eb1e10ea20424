// The two ceilings every GPU benchmark is judged against, measured on the device at hand:
// streaming read bandwidth and the bf16 GEMM rate. Medians of timed repeats with CUDA events.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace di::bench {

// Bytes per second reading `bytes` of device memory once (random bf16 data, 16-byte loads).
Result<double> measure_read_bandwidth(int64_t bytes);
// FLOP/s of a bf16 GEMM with M = N = K = n through the same cuBLAS path the models use.
Result<double> measure_gemm_rate(int64_t n);

}  // namespace di::bench
