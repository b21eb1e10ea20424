// rope_half_at: see mla_rope.h. A block per row, a thread per (vector, pair).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/mla_rope.h"

namespace di::kernels::cuda {
namespace {

__global__ void rope_half_at_kernel(float* x, int64_t row_stride, int64_t count, int64_t width,
                                    const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scaling) {
  pdl_sync();
  const int64_t row = blockIdx.x, half = rot_dim / 2;
  const float pos = static_cast<float>(positions[row]);
  float* xr = x + row * row_stride + (width - rot_dim);
  for (int64_t k = threadIdx.x; k < count * half; k += blockDim.x) {
    const int64_t v = k / half, i = k % half;
    float s, c;
    sincosf(inv_freq[i] * pos, &s, &c);
    c *= scaling;
    s *= scaling;
    float* p = xr + v * width;
    const float a = p[i], b = p[i + half];
    p[i] = a * c - b * s;
    p[i + half] = b * c + a * s;
  }
}

}  // namespace

Status rope_half_at(float* x, int64_t rows, int64_t row_stride, int64_t count, int64_t width,
                    const int32_t* positions, const float* inv_freq, int64_t rot_dim, float scaling, void* stream) {
  if (rows <= 0) return Status::ok();
  if (rot_dim <= 0 || rot_dim % 2 || rot_dim > width)
    return Status::invalid_argument("rope_half_at: rot_dim " + std::to_string(rot_dim) + " must be even and <= width");
  launch_pdl(rope_half_at_kernel, static_cast<unsigned>(rows), 128, 0, as_stream(stream), x, row_stride, count, width,
                                                                                 positions, inv_freq, rot_dim, scaling);
  return launch_status("rope_half_at");
}

}  // namespace di::kernels::cuda
