// The CPU kernels' thread count and worker pool. See threads.h. Workers block on a condition
// variable between jobs: OpenMP's default spin-waiting cost 30x on a loaded 2-core machine.
#include "kernels/cpu/threads.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace di::kernels::cpu {
namespace {

std::atomic<int32_t> g_threads{0};

class Pool {
 public:
  explicit Pool(int32_t workers) {
    for (int32_t i = 0; i < workers; ++i) threads_.emplace_back([this, i] { work(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int32_t size() const { return static_cast<int32_t>(threads_.size()) + 1; }

  void run(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    const int32_t parts = size();
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = &fn;
      n_ = n;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    run_part(0);
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [this] { return pending_ == 0; });
    fn_ = nullptr;
  }

 private:
  void run_part(int32_t part) {
    const int64_t begin = n_ * part / parts_, end = n_ * (part + 1) / parts_;
    if (begin < end) (*fn_)(begin, end);
  }
  void work(int32_t part) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      run_part(part);
      std::lock_guard<std::mutex> lk(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int32_t parts_ = 1;
  int32_t pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

std::mutex g_pool_mu;  // held for a whole parallel_for: one job at a time
std::unique_ptr<Pool> g_pool;

}  // namespace

void set_num_threads(int32_t n) { g_threads = n > 0 ? n : 0; }

int32_t num_threads() {
  const int32_t n = g_threads.load();
  if (n > 0) return n;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int32_t>(hw) : 1;
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  const int32_t threads = num_threads();
  if (n <= 1 || threads <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> lk(g_pool_mu, std::try_to_lock);
  if (!lk.owns_lock()) {  // another job (or a nested call) is running: do it here
    fn(0, n);
    return;
  }
  if (!g_pool || g_pool->size() != threads) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(threads - 1);
  }
  g_pool->run(n, fn);
}

}  // namespace di::kernels::cpu
