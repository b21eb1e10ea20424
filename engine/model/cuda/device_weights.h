// DeviceWeights: a CUDA model's copy of its host weights (fp32 as the WeightLoader gives them)
// in device memory, uploaded once and owned here: large matrices in the model's dtype (fp32, or
// bf16 rounded to nearest even), vectors that stay fp32, integer tables. Compiled only with CUDA.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/dtype.h"

namespace di::engine::cuda {

// fp32 -> bf16 bits, rounded to nearest even (a NaN stays a NaN): how a bf16 model's weights are
// rounded for the device.
uint16_t bf16_bits(float f);

class DeviceWeights {
 public:
  explicit DeviceWeights(kernels::cuda::DType dtype) : dtype_(dtype) {}

  kernels::cuda::DType dtype() const { return dtype_; }
  // `n` floats of `src` in the model's dtype.
  Result<const void*> put(const float* src, int64_t n);
  // `n` floats of `src` as fp32 (norm weights, biases, router vectors); a null `src` gives null.
  Result<const float*> put_f32(const float* src, int64_t n);
  // `n` int32 of `src` (routing tables).
  Result<const int32_t*> put_i32(const int32_t* src, int64_t n);
  // `n` values drawn on the device, offset + uniform in [-scale, scale) from `seed` (benchmark
  // weights without a checkpoint): in the model's dtype, or fp32 when `f32`.
  Result<void*> put_random(int64_t n, float offset, float scale, uint64_t seed, bool f32, void* stream);
  // `bytes` of `src` as they are (fp8 codes).
  Result<const void*> put_bytes(const void* src, int64_t bytes);
  // `bytes` of uninitialized device memory held with the weights (written by a device kernel).
  Result<void*> allocate(int64_t bytes);
  // Device bytes held.
  int64_t bytes() const { return bytes_; }

 private:

  kernels::cuda::DType dtype_;
  std::vector<kernels::cuda::DeviceBuffer> buffers_;  // a buffer's address survives the vector's moves
  int64_t bytes_ = 0;
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
