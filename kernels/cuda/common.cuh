// Device-side helpers shared by the .cu files: fp32 load/store of either storage type, warp
// and block sums, the dtype dispatch and the launch check. Included only by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <utility>

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

// Max over the block (as block_sum); every thread gets the result.
__device__ __forceinline__ float block_max(float v) {
  __shared__ float partial[32];
  v = warp_max(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float m = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : -INFINITY;
  return warp_max(m);
}

// (v, i) becomes (ov, oi) when that ranks first: the larger value, ties to the lower index; an
// index below 0 or a NaN value ranks last (top-k loops mark taken entries NaN).
__device__ __forceinline__ void argmax_merge(float& v, int& i, float ov, int oi) {
  if (oi >= 0 && !isnan(ov) && (i < 0 || ov > v || (ov == v && oi < i))) {
    v = ov;
    i = oi;
  }
}

// The block's best (value, index) by argmax_merge, returned to every thread (blockDim.x a
// multiple of 32). Syncs the block.
__device__ __forceinline__ int block_argmax(float v, int i) {
  __shared__ float best_v[32];
  __shared__ int best_i[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, i, o);
    argmax_merge(v, i, ov, oi);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // best_* may still be read by a previous call
  if (lane == 0) {
    best_v[warp] = v;
    best_i[warp] = i;
  }
  __syncthreads();
  v = best_v[0];
  i = best_i[0];
  for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w) argmax_merge(v, i, best_v[w], best_i[w]);
  return i;
}

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

// Blocks for a grid-stride loop over n elements at `threads` a block: at least one, and capped
// so that a very large n loops instead of launching a huge grid.
inline int64_t flat_blocks(int64_t n, int threads = 256) {
  const int64_t b = (n + threads - 1) / threads;
  return b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b);
}
inline Status launch_status(const char* what) { return cuda_status(cudaGetLastError(), what); }

// Programmatic dependent launch (Hopper). A decode step is a chain of a hundred or more small
// kernels, each a few microseconds; launched this way a kernel's blocks may be scheduled while the
// one before it in the stream still runs, so the launch and the blocks' start overlap its tail.
// Every kernel launched through launch_pdl calls pdl_sync() first: it lets the next kernel be
// scheduled and then waits until the previous grid has finished and its writes are visible, so
// nothing is read or written early. A kernel launched the usual way passes pdl_sync() at once.
// Errors reach launch_status (the runtime records them as the last error).
__device__ __forceinline__ void pdl_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <typename... Params, typename... Args>
void launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = pdl_enabled() ? 1 : 0;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

// Calls f.template operator()<T>() with T the storage type of `dtype`.
template <typename F>
Status dispatch_dtype(DType dtype, F&& f) {
  if (dtype == DType::kF32) return f(float{});
  return f(__nv_bfloat16{});
}

}  // namespace di::kernels::cuda
