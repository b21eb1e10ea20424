// The device side of the cache seam for CUDA models: DeviceCacheMemory (the CacheMemory the
// engine's KV cache is allocated from, bounded by gpu_memory_utilization) and
// DeviceSequenceCache (one sequence's cache in a single device allocation, for tests and
// benchmarks that run a model without the engine). Compiled only with CUDA.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <vector>

#include "engine/model/model.h"
#include "kernels/cuda/device_buffer.h"

namespace di::engine::cuda {

class DeviceCacheMemory final : public CacheMemory {
 public:
  // `utilization`: share of the device's total memory everything may use; `reserve_bytes`:
  // what the model still needs besides its caches (activations, workspaces).
  // `limit_bytes` (> 0): the most the whole model may take (ModelOptions::gpu_memory_limit_bytes).
  DeviceCacheMemory(double utilization, int64_t reserve_bytes, int64_t limit_bytes = 0)
      : utilization_(utilization), reserve_bytes_(reserve_bytes), limit_bytes_(limit_bytes) {}
  bool on_device() const override { return true; }
  Result<uint8_t*> allocate_zeroed(int64_t bytes) override;
  void release(uint8_t* p) override;
  Status copy(uint8_t* dst, const uint8_t* src, int64_t bytes) override;
  Status copy_rows(uint8_t* dst, int64_t dst_pitch, const uint8_t* src, int64_t src_pitch, int64_t width,
                   int64_t rows) override;
  int64_t budget_bytes() const override;
  // The model's stream (a cudaStream_t): copies are enqueued on it, behind the forwards that wrote
  // their sources and ahead of those that read their destinations. Null: the legacy stream.
  void set_stream(void* stream) { stream_ = stream; }
  // The weights' planned device bytes (DeviceModel::check_memory), which a limit leaves the
  // caches less by.
  void set_weight_bytes(int64_t bytes) { weight_bytes_ = bytes; }

 private:
  double utilization_;
  int64_t reserve_bytes_;
  int64_t limit_bytes_ = 0;
  int64_t weight_bytes_ = 0;
  void* stream_ = nullptr;
};

// Every group of `specs` sized for a sequence of up to `max_tokens` tokens
// (cache_entries_needed), one contiguous run of entries per layer, described as a single block.
class DeviceSequenceCache final : public SequenceCache {
 public:
  static Result<std::unique_ptr<DeviceSequenceCache>> create(const std::vector<CacheGroupSpec>& specs,
                                                             int64_t max_tokens);
  void* entry(int32_t group, int32_t layer, int64_t index) override;
  bool paged_view(int32_t group, kernels::CacheView* view) override;

 private:
  DeviceSequenceCache() = default;
  std::vector<CacheGroupSpec> specs_;
  std::vector<int64_t> capacity_;  // entries per layer of each group
  std::vector<kernels::cuda::DeviceBuffer> groups_;
  int32_t block_zero_ = 0;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
