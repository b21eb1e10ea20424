// How many threads the CPU kernels use. One process-wide setting (the CPU path runs one forward
// at a time); kernels read it, models set it from ModelOptions.num_threads.
#pragma once

#include <cstdint>

namespace di::kernels::cpu {

// 0 or negative: all cores. Without OpenMP every kernel runs on the calling thread.
void set_num_threads(int32_t n);
int32_t num_threads();

}  // namespace di::kernels::cpu
