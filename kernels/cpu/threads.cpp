// The CPU kernels' thread count. See threads.h.
#include "kernels/cpu/threads.h"

#include <atomic>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace di::kernels::cpu {
namespace {
std::atomic<int32_t> g_threads{0};
}

void set_num_threads(int32_t n) { g_threads = n > 0 ? n : 0; }

int32_t num_threads() {
#ifdef _OPENMP
  const int32_t n = g_threads.load();
  return n > 0 ? n : omp_get_num_procs();
#else
  return 1;
#endif
}

}  // namespace di::kernels::cpu
