// DeviceCacheMemory and DeviceSequenceCache: see device_cache.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_cache.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/device.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

Result<uint8_t*> DeviceCacheMemory::allocate_zeroed(int64_t bytes) {
  kc::DeviceBuffer b;
  DI_RETURN_IF_ERROR(b.allocate(bytes));
  if (stream_) {
    // Zeroed on the stream the copies into it run on: a memset on the legacy stream could still
    // be running when the first copy lands.
    DI_RETURN_IF_ERROR(kc::cuda_status(
        cudaMemsetAsync(b.get(), 0, static_cast<size_t>(bytes), static_cast<cudaStream_t>(stream_)), "cudaMemsetAsync"));
  } else {
    DI_RETURN_IF_ERROR(kc::fill_zero(b.get(), bytes));
  }
  return static_cast<uint8_t*>(b.release());  // release() below frees it
}

void DeviceCacheMemory::release(uint8_t* p) {
  kc::DeviceBuffer::free_raw(p);
}

Status DeviceCacheMemory::copy(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  if (!stream_) return kc::copy_device_to_device(dst, src, bytes);
  if (bytes <= 0) return Status::ok();
  return kc::cuda_status(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                         static_cast<cudaStream_t>(stream_)),
                         "cudaMemcpyAsync D2D (kv cache)");
}

Status DeviceCacheMemory::copy_rows(uint8_t* dst, int64_t dst_pitch, const uint8_t* src, int64_t src_pitch,
                                    int64_t width, int64_t rows) {
  if (width <= 0 || rows <= 0) return Status::ok();
  return kc::cuda_status(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_pitch), src, static_cast<size_t>(src_pitch),
                                           static_cast<size_t>(width), static_cast<size_t>(rows),
                                           cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream_)),
                         "cudaMemcpy2DAsync D2D (kv cache rows)");
}

int64_t DeviceCacheMemory::budget_bytes() const {
  int64_t free_b = 0, total_b = 0;
  if (!kc::device_memory(&free_b, &total_b).is_ok()) return 0;
  const int64_t allowed = static_cast<int64_t>(static_cast<double>(total_b) * utilization_);
  const int64_t used = total_b - free_b;
  int64_t budget = allowed - used - reserve_bytes_;
  if (limit_bytes_ > 0) budget = std::min(budget, limit_bytes_ - weight_bytes_ - reserve_bytes_);
  return budget > 0 ? budget : 1;  // 1: too little; the cache manager then says what it needed
}

Result<std::unique_ptr<DeviceSequenceCache>> DeviceSequenceCache::create(const std::vector<CacheGroupSpec>& specs,
                                                                         int64_t max_tokens) {
  std::unique_ptr<DeviceSequenceCache> c(new DeviceSequenceCache());
  c->specs_ = specs;
  c->groups_.resize(specs.size());
  for (size_t g = 0; g < specs.size(); ++g) {
    // Entries indexed as the model indexes them (position, ring slot, compressed entry), one
    // contiguous run per layer; at least one so every group has an address.
    const int64_t entries = std::max<int64_t>(1, cache_entries_needed(specs[g], max_tokens));
    c->capacity_.push_back(entries);
    const int64_t bytes = specs[g].num_layers * entries * specs[g].entry_bytes;
    DI_RETURN_IF_ERROR(c->groups_[g].allocate(bytes));
    DI_RETURN_IF_ERROR(kc::fill_zero(c->groups_[g].get(), bytes));
  }
  return c;
}

void* DeviceSequenceCache::entry(int32_t group, int32_t layer, int64_t index) {
  if (group < 0 || static_cast<size_t>(group) >= specs_.size() || layer < 0 || layer >= specs_[group].num_layers ||
      index < 0 || index >= capacity_[group])
    throw std::out_of_range("DeviceSequenceCache: no entry " + std::to_string(group) + "/" + std::to_string(layer) +
                            "/" + std::to_string(index));
  const int64_t eb = specs_[group].entry_bytes;
  return groups_[group].as<uint8_t>() + (layer * capacity_[group] + index) * eb;
}

bool DeviceSequenceCache::paged_view(int32_t group, kernels::CacheView* view) {
  if (group < 0 || static_cast<size_t>(group) >= specs_.size()) return false;
  const int64_t eb = specs_[group].entry_bytes;
  view->base = groups_[group].as<uint8_t>();
  view->layer_stride = capacity_[group] * eb;
  view->block_stride = capacity_[group] * eb;  // one block: only block 0 is ever used
  view->entry_bytes = eb;
  view->block_size = static_cast<int32_t>(capacity_[group]);
  view->compress_rate = 1;  // entries are stored by index, whatever the group's kind
  view->block_ids = &block_zero_;
  view->num_blocks = 1;
  view->on_device = true;
  return true;
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
