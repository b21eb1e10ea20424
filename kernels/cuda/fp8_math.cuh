// Device-side e4m3 decoding shared by the fp8 kernels (fp8_linear.cu, moe_grouped.cu): exact,
// since every e4m3 value is a half. Included only by .cu files.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

namespace di::kernels::cuda {

// 16 e4m3 bytes to fp32.
__device__ __forceinline__ void e4m3x16_to_f32(const uint4& raw, float* f) {
  const auto* pairs = reinterpret_cast<const __nv_fp8x2_storage_t*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pairs[i], __NV_E4M3);
    const float2 t = __half22float2(*reinterpret_cast<const __half2*>(&h));
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

__device__ __forceinline__ float e4m3_value(uint8_t b) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3);
  return __half2float(*reinterpret_cast<const __half*>(&h));
}

}  // namespace di::kernels::cuda
