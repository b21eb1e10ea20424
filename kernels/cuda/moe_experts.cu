// gather_rows, clamped_swiglu, scatter_add_rows: see moe_experts.h. A block row per output row
// (no 64-bit division per element), float4 accesses where the width allows.
#include <cuda_bf16.h>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mma_tile.cuh"
#include "kernels/cuda/moe_experts.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxRowBlocks = 65535;  // grid.y

__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ __forceinline__ void store4(__nv_bfloat16* p, float4 v) { store_bf16x4(p, v); }
__device__ __forceinline__ void store1(float* p, float v) { *p = v; }
__device__ __forceinline__ void store1(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

// Rows y = blockIdx.y, blockIdx.y + gridDim.y, ...; columns of 4 across blockIdx.x and the threads.
#define DI_FOR_ROWS(i, n) for (int64_t i = blockIdx.y; i < (n); i += gridDim.y)
#define DI_FOR_COLS4(c, width) \
  for (int64_t c = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * 4; c < (width); c += int64_t{gridDim.x} * blockDim.x * 4)

template <typename T>
__global__ void gather_kernel(const float* x, const int32_t* rows, int64_t n, int64_t dim, T* out) {
  pdl_sync();
  DI_FOR_ROWS(i, n) {
    const float* src = x + static_cast<int64_t>(rows[i]) * dim;
    T* dst = out + i * dim;
    if (dim % 4 == 0) {
      DI_FOR_COLS4(c, dim) store4(dst + c, *reinterpret_cast<const float4*>(src + c));
    } else {
      DI_FOR_COLS4(c, dim)
      for (int64_t k = c; k < c + 4 && k < dim; ++k) store1(dst + k, src[k]);
    }
  }
}

__device__ __forceinline__ float swiglu(float g, float u, float limit) {
  g = fminf(g, limit);
  u = fminf(fmaxf(u, -limit), limit);
  return g / (1.0f + expf(-g)) * u;
}

template <typename T>
__global__ void swiglu_kernel(const float* gu, int64_t rows, int64_t inter, float limit, T* out) {
  pdl_sync();
  DI_FOR_ROWS(r, rows) {
    const float* g = gu + r * 2 * inter;
    const float* u = g + inter;
    T* o = out + r * inter;
    if (inter % 4 == 0) {
      DI_FOR_COLS4(c, inter) {
        const float4 a = *reinterpret_cast<const float4*>(g + c), b = *reinterpret_cast<const float4*>(u + c);
        store4(o + c, make_float4(swiglu(a.x, b.x, limit), swiglu(a.y, b.y, limit), swiglu(a.z, b.z, limit),
                                  swiglu(a.w, b.w, limit)));
      }
    } else {
      DI_FOR_COLS4(c, inter)
      for (int64_t k = c; k < c + 4 && k < inter; ++k) store1(o + k, swiglu(g[k], u[k], limit));
    }
  }
}

__global__ void scatter_add_kernel(const float* x, const int32_t* rows, const float* w, int64_t n, int64_t dim,
                                   float* y) {
  pdl_sync();
  DI_FOR_ROWS(i, n) {
    float* dst = y + static_cast<int64_t>(rows[i]) * dim;
    const float* src = x + i * dim;
    const float wi = w[i];
    // Atomic: a row may repeat (hash routing). Hopper adds four floats in one atomic.
    if (dim % 4 == 0) {
      DI_FOR_COLS4(c, dim) {
        const float4 v = *reinterpret_cast<const float4*>(src + c);
        atomicAdd(reinterpret_cast<float4*>(dst + c), make_float4(v.x * wi, v.y * wi, v.z * wi, v.w * wi));
      }
    } else {
      DI_FOR_COLS4(c, dim)
      for (int64_t k = c; k < c + 4 && k < dim; ++k) atomicAdd(dst + k, src[k] * wi);
    }
  }
}

#undef DI_FOR_ROWS
#undef DI_FOR_COLS4

// Enough column blocks for `width` in 4s, a row of blocks per row (up to grid.y's limit).
dim3 row_grid(int64_t rows, int64_t width) {
  const int64_t cols = (width + 4 * kThreads - 1) / (4 * kThreads);
  return dim3(static_cast<unsigned>(cols), static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks));
}

}  // namespace

Status gather_rows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(gather_kernel<float>, row_grid(n, dim), kThreads, 0, as_stream(stream), x, rows, n, dim, out);
  return launch_status("gather_rows");
}

Status gather_rows_bf16(const float* x, const int32_t* rows, int64_t n, int64_t dim, void* out, void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(gather_kernel<__nv_bfloat16>, row_grid(n, dim), kThreads, 0, as_stream(stream), x, rows, n, dim,
             static_cast<__nv_bfloat16*>(out));
  return launch_status("gather_rows_bf16");
}

Status clamped_swiglu(const float* gate_up, int64_t rows, int64_t inter, float limit, float* out, void* stream) {
  if (rows <= 0) return Status::ok();
  launch_pdl(swiglu_kernel<float>, row_grid(rows, inter), kThreads, 0, as_stream(stream), gate_up, rows, inter, limit,
             out);
  return launch_status("clamped_swiglu");
}

Status clamped_swiglu_bf16(const float* gate_up, int64_t rows, int64_t inter, float limit, void* out, void* stream) {
  if (rows <= 0) return Status::ok();
  launch_pdl(swiglu_kernel<__nv_bfloat16>, row_grid(rows, inter), kThreads, 0, as_stream(stream), gate_up, rows, inter,
             limit, static_cast<__nv_bfloat16*>(out));
  return launch_status("clamped_swiglu_bf16");
}

Status scatter_add_rows(const float* x, const int32_t* rows, const float* weights, int64_t n, int64_t dim, float* y,
                        void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(scatter_add_kernel, row_grid(n, dim), kThreads, 0, as_stream(stream), x, rows, weights, n, dim, y);
  return launch_status("scatter_add_rows");
}

}  // namespace di::kernels::cuda
