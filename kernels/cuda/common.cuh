// Device-side helpers shared by the .cu files: fp32 load/store of either storage type, warp
// and block sums, the dtype dispatch and the launch check. Included only by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/dtype.h"

namespace di::kernels::cuda {

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float s = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : 0.f;
  return warp_sum(s);
}

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
inline Status launch_status(const char* what) { return cuda_status(cudaGetLastError(), what); }

// Calls f.template operator()<T>() with T the storage type of `dtype`.
template <typename F>
Status dispatch_dtype(DType dtype, F&& f) {
  if (dtype == DType::kF32) return f(float{});
  return f(__nv_bfloat16{});
}

}  // namespace di::kernels::cuda
