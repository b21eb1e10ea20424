// How the CPU kernels use threads: one process-wide thread count and a small pool whose idle
// workers sleep (no spinning, so a shared or oversubscribed machine loses nothing to waiting).
// Kernels call parallel_for; models set the count from ModelOptions.num_threads.
#pragma once

#include <cstdint>
#include <functional>

namespace di::kernels::cpu {

// 0 or negative: all cores.
void set_num_threads(int32_t n);
int32_t num_threads();

// Calls fn(begin, end) on disjoint ranges covering [0, n), using up to num_threads() threads
// (the caller runs one range). Runs inline when n is small, one thread is set, or another
// parallel_for is already running (calls from several threads serialise nothing, they just
// don't nest). Returns when every range is done.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace di::kernels::cpu
