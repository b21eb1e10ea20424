// DeviceWeights: see device_weights.h.
#ifdef DI_WITH_CUDA

#include "engine/model/cuda/device_weights.h"

#include <cstring>

#include "engine/model/cuda/weight_upload.h"
#include "kernels/cpu/threads.h"
#include "kernels/cuda/elementwise.h"

namespace di::engine::cuda {
namespace kc = di::kernels::cuda;

uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

Result<const void*> DeviceWeights::put_bytes(const void* src, int64_t bytes) {
  kc::DeviceBuffer b;
  DI_RETURN_IF_ERROR(b.allocate(bytes));
  DI_RETURN_IF_ERROR(upload_to_device(b.get(), src, bytes));
  buffers_.push_back(std::move(b));
  bytes_ += bytes;
  return static_cast<const void*>(buffers_.back().get());
}

Result<void*> DeviceWeights::allocate(int64_t bytes) {
  kc::DeviceBuffer b;
  DI_RETURN_IF_ERROR(b.allocate(bytes));
  buffers_.push_back(std::move(b));
  bytes_ += bytes;
  return buffers_.back().get();
}

Result<const void*> DeviceWeights::put(const float* src, int64_t n) {
  if (dtype_ == kc::DType::kF32) return put_bytes(src, n * 4);
  std::vector<uint16_t> h(static_cast<size_t>(n));
  // Over the CPU threads: the large matrices of a bf16 model are gigabytes.
  kernels::cpu::parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) h[i] = bf16_bits(src[i]);
  });
  return put_bytes(h.data(), n * 2);
}

Result<void*> DeviceWeights::put_random(int64_t n, float offset, float scale, uint64_t seed, bool f32, void* stream) {
  const kc::DType t = f32 ? kc::DType::kF32 : dtype_;
  const int64_t bytes = n * (t == kc::DType::kF32 ? 4 : 2);
  kc::DeviceBuffer b;
  DI_RETURN_IF_ERROR(b.allocate(bytes));
  DI_RETURN_IF_ERROR(kc::fill_uniform(b.get(), n, offset, scale, seed, t, stream));
  buffers_.push_back(std::move(b));
  bytes_ += bytes;
  return buffers_.back().get();
}

Result<const float*> DeviceWeights::put_f32(const float* src, int64_t n) {
  if (!src) return static_cast<const float*>(nullptr);
  DI_ASSIGN_OR_RETURN(const void* p, put_bytes(src, n * 4));
  return static_cast<const float*>(p);
}

Result<const int32_t*> DeviceWeights::put_i32(const int32_t* src, int64_t n) {
  DI_ASSIGN_OR_RETURN(const void* p, put_bytes(src, n * 4));
  return static_cast<const int32_t*>(p);
}

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
