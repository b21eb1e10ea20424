// add_rms_norm_with_bf16: see mla_norm.h. A block per row.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_norm.h"

namespace di::kernels::cuda {
namespace {

__global__ void add_rms_norm_bf16_kernel(float* res, const float* delta, const float* w, float* y,
                                         __nv_bfloat16* y16, int64_t dim, float eps) {
  pdl_sync();
  float* rr = res + blockIdx.x * dim;
  const float* dr = delta + blockIdx.x * dim;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float s = rr[i] + dr[i];
    rr[i] = s;
    ss += s * s;
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(dim) + eps);  // syncs: every rr[i] is written
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = rr[i] * inv * w[i];
    y[blockIdx.x * dim + i] = v;
    y16[blockIdx.x * dim + i] = __float2bfloat16(v);
  }
}

}  // namespace

Status add_rms_norm_with_bf16(float* residual, const float* delta, const float* weight, float* y, void* y16,
                              int64_t rows, int64_t dim, float eps, void* stream) {
  if (rows <= 0) return Status::ok();
  if (dim < 1 || !weight) return Status::invalid_argument("add_rms_norm_with_bf16: dim >= 1 and a weight");
  launch_pdl(add_rms_norm_bf16_kernel, static_cast<unsigned>(rows), dim >= 1024 ? 512 : 128, 0, as_stream(stream), residual, delta, weight, y, static_cast<__nv_bfloat16*>(y16), dim, eps);
  return launch_status("add_rms_norm_with_bf16");
}

}  // namespace di::kernels::cuda
