// RMSNorm kernel: one block per row; each thread accumulates squares in fp32 over a strided
// slice, a block reduction gives the row's mean square, then a second pass scales. Rows are
// re-read from global memory in the second pass rather than cached in shared memory so any
// dim works; for the dims DeepSeek uses (<= 7168) the row stays in L2 between passes.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/rms_norm.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void rms_norm_bf16_kernel(const __nv_bfloat16* __restrict__ x,
                                     const __nv_bfloat16* __restrict__ w,
                                     __nv_bfloat16* y, int64_t dim, float eps) {
  const int64_t row = blockIdx.x;
  const __nv_bfloat16* xr = x + row * dim;
  __nv_bfloat16* yr = y + row * dim;

  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = __bfloat162float(xr[i]);
    sum += v * v;
  }
  __shared__ float partial[kThreads / 32];
  sum = warp_sum(sum);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    float s = threadIdx.x < (kThreads / 32) ? partial[threadIdx.x] : 0.f;
    s = warp_sum(s);
    if (threadIdx.x == 0) partial[0] = s;
  }
  __syncthreads();
  const float inv = rsqrtf(partial[0] / static_cast<float>(dim) + eps);

  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = __bfloat162float(xr[i]) * inv;
    yr[i] = __float2bfloat16(v * __bfloat162float(w[i]));
  }
}

}  // namespace

Status rms_norm_bf16(const uint16_t* x, const uint16_t* weight, uint16_t* y, int64_t rows,
                     int64_t dim, float eps, void* stream) {
  if (rows < 0 || dim <= 0) return Status::invalid_argument("rms_norm: rows >= 0 and dim > 0");
  if (rows == 0) return Status::ok();
  if (rows > 0x7fffffff) return Status::invalid_argument("rms_norm: too many rows for one grid");
  rms_norm_bf16_kernel<<<static_cast<unsigned>(rows), kThreads, 0,
                         static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const __nv_bfloat16*>(x), reinterpret_cast<const __nv_bfloat16*>(weight),
      reinterpret_cast<__nv_bfloat16*>(y), dim, eps);
  return cuda_status(cudaGetLastError(), "rms_norm_bf16 launch");
}

}  // namespace di::kernels::cuda
