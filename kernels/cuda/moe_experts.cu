// gather_rows, clamped_swiglu, scatter_add_rows: see moe_experts.h. Flat grid-stride loops.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/moe_experts.h"

namespace di::kernels::cuda {
namespace {

constexpr int kThreads = 256;


__global__ void gather_kernel(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out) {
  pdl_sync();
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n * dim; t += int64_t{gridDim.x} * blockDim.x)
    out[t] = x[static_cast<int64_t>(rows[t / dim]) * dim + t % dim];
}

__global__ void swiglu_kernel(const float* gu, int64_t rows, int64_t inter, float limit, float* out) {
  pdl_sync();
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < rows * inter;
       t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = t / inter, c = t % inter;
    const float g = fminf(gu[r * 2 * inter + c], limit);
    const float u = fminf(fmaxf(gu[r * 2 * inter + inter + c], -limit), limit);
    out[t] = g / (1.0f + expf(-g)) * u;
  }
}

__global__ void scatter_add_kernel(const float* x, const int32_t* rows, const float* w, int64_t n, int64_t dim,
                                   float* y) {
  pdl_sync();
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < n * dim; t += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = t / dim;
    atomicAdd(&y[static_cast<int64_t>(rows[i]) * dim + t % dim], x[t] * w[i]);  // a row may repeat (hash routing)
  }
}

}  // namespace

Status gather_rows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(gather_kernel, flat_blocks(n * dim), kThreads, 0, as_stream(stream), x, rows, n, dim, out);
  return launch_status("gather_rows");
}

Status clamped_swiglu(const float* gate_up, int64_t rows, int64_t inter, float limit, float* out, void* stream) {
  if (rows <= 0) return Status::ok();
  launch_pdl(swiglu_kernel, flat_blocks(rows * inter), kThreads, 0, as_stream(stream), gate_up, rows, inter, limit, out);
  return launch_status("clamped_swiglu");
}

Status scatter_add_rows(const float* x, const int32_t* rows, const float* weights, int64_t n, int64_t dim, float* y,
                        void* stream) {
  if (n <= 0) return Status::ok();
  launch_pdl(scatter_add_kernel, flat_blocks(n * dim), kThreads, 0, as_stream(stream), x, rows, weights, n, dim, y);
  return launch_status("scatter_add_rows");
}

}  // namespace di::kernels::cuda
