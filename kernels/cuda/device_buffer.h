// DeviceBuffer: one cudaMalloc'ed allocation with RAII, and the host<->device copies every model
// needs. Host-only header; no kernel launches here.
#pragma once

#include <cstdint>
#include <utility>

#include "base/status.h"

namespace di::kernels::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` (uninitialised); the old allocation, if any, is freed first.
  Status allocate(int64_t bytes);
  // Grows to at least `bytes`, discarding the contents when it must reallocate.
  Status reserve(int64_t bytes);
  void reset();
  // Gives up ownership: the caller frees the pointer with free_raw().
  void* release() {
    bytes_ = 0;
    return std::exchange(ptr_, nullptr);
  }
  static void free_raw(void* p);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  int64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
};

// Synchronous copies (they wait for the default stream); `stream` variants are asynchronous.
Status copy_to_device(void* dst, const void* src, int64_t bytes);
Status copy_to_host(void* dst, const void* src, int64_t bytes);
Status copy_to_device_async(void* dst, const void* src, int64_t bytes, void* stream);
Status copy_to_host_async(void* dst, const void* src, int64_t bytes, void* stream);
Status copy_device_to_device(void* dst, const void* src, int64_t bytes);
Status fill_zero(void* dst, int64_t bytes);
Status stream_synchronize(void* stream);

// Free and total bytes of the current device.
Status device_memory(int64_t* free_bytes, int64_t* total_bytes);

}  // namespace di::kernels::cuda
