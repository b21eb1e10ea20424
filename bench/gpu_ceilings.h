// The two ceilings every GPU benchmark is judged against, measured on the device at hand:
// streaming read bandwidth and the bf16 GEMM rate. Medians of timed repeats with CUDA events.
#pragma once

#include <cstdint>
#include <functional>

#include "base/status.h"

namespace di::bench {

// Median device time (ms, by CUDA events on the default stream) of `reps` calls of `run` after
// two warm-up calls; the first failed call's Status ends it.
Result<double> median_event_ms(const std::function<Status()>& run, int reps = 10);

// Bytes per second reading `bytes` of device memory once (random bf16 data, 16-byte loads).
Result<double> measure_read_bandwidth(int64_t bytes);
// FLOP/s of a bf16 GEMM with M = N = K = n through the same cuBLAS path the models use.
Result<double> measure_gemm_rate(int64_t n);

}  // namespace di::bench
